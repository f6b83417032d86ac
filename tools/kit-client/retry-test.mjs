#!/usr/bin/env node
// Checks fetch-blocks.mjs against a simulated node, through a tiny stand-in
// for Cube Runner that answers the first getBlock of every slot with
// HTTP 429 + Retry-After + -32019 and proxies everything else to the sim.
//
//   node retry-test.mjs            # starts ../../build/bin/solana-sim itself
//   SOLANA_SIM=/path/to/solana-sim node retry-test.mjs
//
// Prints "ok"/"FAIL" lines and exits non-zero on any failure. Every process
// it starts is killed before it exits.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const SIM = process.env.SOLANA_SIM ?? path.join(here, '../../build/bin/solana-sim');
const API_KEY = 'retry-test-key';
const children = [];
let failures = 0;

function check(name, cond, detail = '') {
    if (cond) console.log(`ok   - ${name}`);
    else {
        failures++;
        console.log(`FAIL - ${name}${detail ? `: ${detail}` : ''}`);
    }
}

function killAll() {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGTERM');
}
process.on('exit', killAll);

async function freePort() {
    const s = http.createServer();
    s.listen(0, '127.0.0.1');
    await once(s, 'listening');
    const { port } = s.address();
    s.close();
    return port;
}

async function startSim(args) {
    const port = await freePort();
    const child = spawn(SIM, ['--port', String(port), '--quiet', ...args], { stdio: ['ignore', 'ignore', 'inherit'] });
    children.push(child);
    const url = `http://127.0.0.1:${port}/`;
    for (let i = 0; i < 100; i++) {
        try {
            const r = await fetch(`${url}_sim/stats`);
            if (r.ok) return { url, child };
        } catch {}
        await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`solana-sim did not come up on port ${port}`);
}

async function rpc(url, method, params) {
    const r = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    });
    return (await r.json()).result;
}

// The stand-in: per slot, answer the first `rejectTimes` getBlock calls with
// 429 + Retry-After (+ -32019), then proxy to the sim. Records every call.
async function startStandIn(simUrl, { retryAfter = '1', rejectTimes = 1 } = {}) {
    const seen = new Map(); // slot -> [{t, status}]
    const badKeys = [];
    const server = http.createServer(async (req, res) => {
        const chunks = [];
        for await (const c of req) chunks.push(c);
        const body = Buffer.concat(chunks).toString();
        if (req.headers['x-api-key'] !== API_KEY) badKeys.push(req.headers['x-api-key'] ?? '(none)');
        let msg = null;
        try {
            msg = JSON.parse(body);
        } catch {}
        if (msg && msg.method === 'getBlock') {
            const slot = String(msg.params?.[0]);
            const calls = seen.get(slot) ?? [];
            seen.set(slot, calls);
            if (calls.length < rejectTimes) {
                calls.push({ t: Date.now(), status: 429 });
                const out = JSON.stringify({
                    jsonrpc: '2.0',
                    error: { code: -32019, message: 'Block queued for retrieval from long-term storage; please try again' },
                    id: msg.id ?? null,
                });
                res.writeHead(429, { 'content-type': 'application/json', 'retry-after': retryAfter });
                res.end(out);
                return;
            }
            calls.push({ t: Date.now(), status: 200 });
        }
        const upstream = await fetch(simUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
        res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/json' });
        res.end(Buffer.from(await upstream.arrayBuffer()));
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return { url: `http://127.0.0.1:${server.address().port}/`, seen, badKeys, server };
}

async function runClient(url, from, count, extra = []) {
    const child = spawn(
        process.execPath,
        [path.join(here, 'fetch-blocks.mjs'), '--url', url, '--api-key', API_KEY, '--from', String(from), '--count', String(count), ...extra],
        { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    children.push(child);
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    const [code] = await once(child, 'exit');
    let summary = null;
    try {
        summary = JSON.parse(out.trim());
    } catch {}
    return { code, summary, out: out.trim() };
}

async function main() {
    const sim = await startSim([]);
    const finalized = Number(await rpc(sim.url, 'getSlot', [{ commitment: 'finalized' }]));
    const from = finalized - 300;

    // 1. Every slot: 429 + Retry-After: 1 once, then served.
    const count = 24;
    const standIn = await startStandIn(sim.url);
    const t0 = Date.now();
    const r1 = await runClient(standIn.url, from, count);
    const elapsed = Date.now() - t0;
    console.log(`# ${r1.out} (${elapsed} ms)`);
    check('client exits 0', r1.code === 0, `exit ${r1.code}`);
    check('blocks + skipped == count', r1.summary && r1.summary.blocks + r1.summary.skipped === count);
    check('one retry per slot', r1.summary?.retries === count, `retries ${r1.summary?.retries}`);
    const slots = [...standIn.seen.entries()];
    check('every slot asked for', slots.length === count, `${slots.length} slots`);
    check(
        'each slot: one 429 then one 200',
        slots.every(([, c]) => c.length === 2 && c[0].status === 429 && c[1].status === 200),
    );
    const gaps = slots.map(([, c]) => (c.length === 2 ? c[1].t - c[0].t : -1));
    check('resend waits Retry-After (>= 1 s) and well within 150 s', gaps.every((g) => g >= 950 && g < 150_000), `gaps ${Math.min(...gaps)}..${Math.max(...gaps)} ms`);
    check('several requests in flight at once', elapsed < count * 1000, `${elapsed} ms`);
    check('X-Api-Key sent on every request', standIn.badKeys.length === 0, standIn.badKeys.slice(0, 3).join(','));
    standIn.server.close();

    // 2. A slot that never stops answering 429: the deadline ends it, and the run fails.
    const stubborn = await startStandIn(sim.url, { rejectTimes: 1000 });
    const r2 = await runClient(stubborn.url, from, 2, ['--timeout-s', '3']);
    console.log(`# ${r2.out}`);
    check('endless 429: exit 1 with errors', r2.code === 1 && r2.summary?.errors.length === 2);
    stubborn.server.close();

    // 3. An archive sim whose storage fails 30% of getBlock calls (503 without Retry-After).
    const archive = await startSim(['--archive', '--getblock-failure-rate', '0.3', '--getblock-latency-ms', '50']);
    const r3 = await runClient(archive.url, 1000, 20);
    console.log(`# ${r3.out}`);
    check('flaky archive: exit 0 after retries', r3.code === 0 && r3.summary?.retries > 0, `exit ${r3.code}`);

    // 4. Slots the sim does not have (above finalized): errors, not skipped.
    const r4 = await runClient(sim.url, finalized + 1000, 2);
    check('-32004 is an error, not a skipped slot', r4.code === 1 && r4.summary?.skipped === 0 && r4.summary?.errors.length === 2);

    console.log(failures === 0 ? 'all passed' : `${failures} failed`);
    killAll();
    process.exitCode = failures === 0 ? 0 : 1;
}

main().catch((err) => {
    console.error(err);
    killAll();
    process.exit(1);
});
