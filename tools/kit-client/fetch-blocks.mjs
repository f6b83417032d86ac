#!/usr/bin/env node
// Fetches consecutive blocks through a Solana JSON-RPC endpoint (Solgate /
// Cube Runner, or a plain node) with a real @solana/kit client, honouring
// HTTP 429/503 + Retry-After. See README.md.
//
//   node fetch-blocks.mjs --url http://127.0.0.1:PORT/ --api-key KEY --from SLOT --count 50 \
//       [--timeout-s 300] [--concurrency 8] [--verbose]
//
// Prints one JSON line: {"requested":N,"blocks":B,"skipped":S,"retries":R,"errors":[...]}
// and exits 0 only when B + S == N and there are no errors.
import { createSolanaRpc, isSolanaError, SOLANA_ERROR__RPC__TRANSPORT_HTTP_ERROR } from '@solana/kit';

const SKIPPED_CODES = new Set([-32007, -32009]); // slot skipped / missing in long-term storage
const STORAGE_UNREACHABLE = -32019; // "Failed to query long-term storage; please try again"
const MAX_RETRY_AFTER_S = 150; // a retrieval queued by the gateway waits this long for the resend
const MAX_BACKOFF_TRIES = 5; // retries without a Retry-After header (503, or -32019 in a 200)
const REQUEST_TIMEOUT_MS = 120_000;

function usage(message) {
    if (message) process.stderr.write(`fetch-blocks: ${message}\n`);
    process.stderr.write(
        'usage: node fetch-blocks.mjs --url URL --api-key KEY --from SLOT --count N ' +
            '[--timeout-s 300] [--concurrency 8] [--verbose]\n',
    );
    process.exit(2);
}

function parseArgs(argv) {
    const opts = { timeoutS: 300, concurrency: 8, verbose: false };
    for (let i = 0; i < argv.length; i++) {
        let arg = argv[i];
        let value;
        if (arg === '--verbose') {
            opts.verbose = true;
            continue;
        }
        if (arg === '--help' || arg === '-h') usage();
        const eq = arg.indexOf('=');
        if (eq > 0) {
            value = arg.slice(eq + 1);
            arg = arg.slice(0, eq);
        } else {
            if (i + 1 >= argv.length) usage(`missing value for ${arg}`);
            value = argv[++i];
        }
        const int = (min) => {
            if (!/^\d+$/.test(value)) usage(`invalid value for ${arg}: '${value}'`);
            const n = BigInt(value);
            if (n < BigInt(min)) usage(`${arg} must be >= ${min}`);
            return n;
        };
        switch (arg) {
            case '--url':
                opts.url = value;
                break;
            case '--api-key':
                opts.apiKey = value;
                break;
            case '--from':
                opts.from = int(0);
                break;
            case '--count':
                opts.count = Number(int(1));
                break;
            case '--timeout-s':
                opts.timeoutS = Number(int(1));
                break;
            case '--concurrency':
                opts.concurrency = Number(int(1));
                break;
            default:
                usage(`unknown flag ${arg}`);
        }
    }
    if (!opts.url) usage('--url is required');
    if (opts.apiKey === undefined) usage('--api-key is required');
    if (opts.from === undefined) usage('--from is required');
    if (opts.count === undefined) usage('--count is required');
    return opts;
}

// Retry-After is delta-seconds or an HTTP-date (RFC 9110 10.2.3).
function parseRetryAfter(value) {
    if (value == null) return null;
    const text = String(value).trim();
    if (/^\d+$/.test(text)) return Number(text);
    const when = Date.parse(text);
    if (Number.isNaN(when)) return null;
    return Math.max(0, Math.ceil((when - Date.now()) / 1000));
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function describe(err) {
    if (isSolanaError(err)) {
        const ctx = err.context ?? {};
        if (isSolanaError(err, SOLANA_ERROR__RPC__TRANSPORT_HTTP_ERROR)) return `HTTP ${ctx.statusCode} ${ctx.message ?? ''}`.trim();
        return `JSON-RPC ${ctx.__code}: ${err.message}`;
    }
    if (err?.name === 'TimeoutError' || err?.name === 'AbortError') return 'request timed out';
    return `${err?.name ?? 'Error'}: ${err?.message ?? err}${err?.cause ? ` (${err.cause.code ?? err.cause.message})` : ''}`;
}

async function main() {
    const opts = parseArgs(process.argv.slice(2));
    const deadline = Date.now() + opts.timeoutS * 1000;
    const log = (line) => opts.verbose && process.stderr.write(`fetch-blocks: ${line}\n`);

    // kit's default transport (HTTP + request coalescing) with the API key
    // header. A non-2xx answer throws SOLANA_ERROR__RPC__TRANSPORT_HTTP_ERROR
    // carrying statusCode and the response headers (hence Retry-After).
    const rpc = createSolanaRpc(opts.url, { headers: { 'x-api-key': opts.apiKey } });

    const summary = { requested: opts.count, blocks: 0, skipped: 0, retries: 0, errors: [] };
    const results = new Map(); // slot (bigint) -> block | 'skipped'

    async function fetchSlot(slot) {
        let backoffTries = 0;
        for (;;) {
            const remaining = deadline - Date.now();
            if (remaining <= 0) throw new Error('deadline (--timeout-s) reached');
            let waitS;
            try {
                const block = await rpc
                    .getBlock(slot, { maxSupportedTransactionVersion: 0, transactionDetails: 'full', rewards: false })
                    .send({ abortSignal: AbortSignal.timeout(Math.min(remaining, REQUEST_TIMEOUT_MS)) });
                if (block == null) throw new Error('getBlock returned null');
                return block;
            } catch (err) {
                if (isSolanaError(err, SOLANA_ERROR__RPC__TRANSPORT_HTTP_ERROR)) {
                    const { statusCode, headers } = err.context;
                    const retryAfter = parseRetryAfter(headers?.get?.('retry-after'));
                    if ((statusCode === 429 || statusCode === 503) && retryAfter != null) {
                        // Queued for retrieval or rate limited: come back after Retry-After.
                        waitS = Math.min(retryAfter, MAX_RETRY_AFTER_S);
                    } else if (statusCode === 503 || statusCode === 429) {
                        if (++backoffTries > MAX_BACKOFF_TRIES) throw err;
                        waitS = 2 ** (backoffTries - 1);
                    } else {
                        throw err;
                    }
                    log(`slot ${slot}: HTTP ${statusCode}, Retry-After ${retryAfter ?? '-'}; resending in ${waitS} s`);
                } else if (isSolanaError(err) && SKIPPED_CODES.has(Number(err.context?.__code))) {
                    return 'skipped';
                } else if (isSolanaError(err) && Number(err.context?.__code) === STORAGE_UNREACHABLE) {
                    // -32019 without an HTTP status to go by: back off and retry.
                    if (++backoffTries > MAX_BACKOFF_TRIES) throw err;
                    waitS = 2 ** (backoffTries - 1);
                    log(`slot ${slot}: -32019; resending in ${waitS} s`);
                } else {
                    throw err;
                }
            }
            if (Date.now() + waitS * 1000 > deadline) throw new Error(`deadline reached while told to wait ${waitS} s`);
            summary.retries++;
            await sleep(waitS * 1000);
        }
    }

    // A fixed pool of workers takes slots in order, several in flight at once.
    let next = 0;
    async function worker() {
        while (next < opts.count) {
            const slot = opts.from + BigInt(next++);
            try {
                const r = await fetchSlot(slot);
                results.set(slot, r);
                if (r === 'skipped') summary.skipped++;
                else summary.blocks++;
            } catch (err) {
                summary.errors.push(`slot ${slot}: ${describe(err)}`);
            }
        }
    }
    await Promise.all(Array.from({ length: Math.min(opts.concurrency, opts.count) }, worker));

    // Consistency of what came back: each block has a hash and transactions,
    // and within the range its parent is the previous non-skipped slot, whose
    // blockhash is this block's previousBlockhash.
    for (const [slot, block] of [...results.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
        if (block === 'skipped') continue;
        const where = `slot ${slot}`;
        if (typeof block.blockhash !== 'string' || !Array.isArray(block.transactions)) {
            summary.errors.push(`${where}: malformed block`);
            continue;
        }
        const parent = BigInt(block.parentSlot);
        if (parent >= slot && slot !== 0n) {
            summary.errors.push(`${where}: parentSlot ${parent} is not below the slot`);
            continue;
        }
        if (parent < opts.from) continue;
        for (let s = parent + 1n; s < slot; s++) {
            if (results.has(s) && results.get(s) !== 'skipped') summary.errors.push(`${where}: parent ${parent} skips produced slot ${s}`);
        }
        const p = results.get(parent);
        if (p === 'skipped') summary.errors.push(`${where}: parent ${parent} reported skipped`);
        else if (p && p.blockhash !== block.previousBlockhash) summary.errors.push(`${where}: previousBlockhash does not match slot ${parent}`);
    }

    process.stdout.write(JSON.stringify(summary) + '\n');
    const ok = summary.blocks + summary.skipped === opts.count && summary.errors.length === 0;
    process.exitCode = ok ? 0 : 1;
}

main().catch((err) => {
    process.stderr.write(`fetch-blocks: ${err?.stack ?? err}\n`);
    process.exit(1);
});
