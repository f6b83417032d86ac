#!/usr/bin/env node
// Subscribes to slot notifications with @solana/kit's
// createSolanaRpcSubscriptions and prints the first N slots, one per line:
// what a dApp does through Solgate's WebSocket support.
//
//   node slot-notifications.mjs --url ws://127.0.0.1:8900 --count 3 --timeout-s 10
//
// Exits 0 after N notifications, 1 on a timeout or an error (printed).
import { createSolanaRpcSubscriptions } from '@solana/kit';

function option(name, fallback) {
    const at = process.argv.indexOf(`--${name}`);
    return at > 0 && at + 1 < process.argv.length ? process.argv[at + 1] : fallback;
}

const url = option('url', 'ws://127.0.0.1:8900');
const count = Number(option('count', '3'));
const timeoutMs = Number(option('timeout-s', '10')) * 1000;

const abort = new AbortController();
const timer = setTimeout(() => abort.abort(new Error(`no ${count} notifications in ${timeoutMs} ms`)), timeoutMs);
try {
    const subscriptions = createSolanaRpcSubscriptions(url);
    const notifications = await subscriptions.slotNotifications().subscribe({ abortSignal: abort.signal });
    let seen = 0;
    for await (const n of notifications) {
        console.log(`slot ${n.slot} parent ${n.parent} root ${n.root}`);
        if (++seen >= count) break;
    }
    clearTimeout(timer);
    abort.abort();
    process.exit(0);
} catch (e) {
    clearTimeout(timer);
    console.error(`slot-notifications: ${e && e.message ? e.message : e}`);
    process.exit(1);
}
