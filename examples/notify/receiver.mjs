// A receiver for contract-sync's webhook notifications, in plain Node.js (no dependencies). It
// trusts a body only when X-Contract-Sync-Signature is the HMAC-SHA256 of the exact bytes received,
// keyed with the channel's secret, and it drops a delivery it has already seen (retries repeat it).
//
//   HOOK_SECRET=... PORT=8081 node examples/notify/receiver.mjs
//
// stdout: {"listening": URL}, then one JSON line per accepted notification.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';

/** True when `header` is `sha256=` and the hex HMAC-SHA256 of `rawBody` (a Buffer) with `secret`. */
export function verify(rawBody, header, secret) {
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(rawBody).digest('hex')}`);
  const given = Buffer.from(typeof header === 'string' ? header : '');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

const secret = process.env.HOOK_SECRET;
if (!secret) {
  console.error('set HOOK_SECRET to the secret the contract-sync channel is configured with');
  process.exit(1);
}
const seen = new Set();

const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    const raw = Buffer.concat(chunks);
    if (req.method !== 'POST' || !verify(raw, req.headers['x-contract-sync-signature'], secret)) {
      res.writeHead(401).end('bad signature');
      return;
    }
    const delivery = req.headers['x-contract-sync-delivery'];
    if (!seen.has(delivery)) {
      seen.add(delivery);
      const { event, tenant, summary, contracts } = JSON.parse(raw.toString('utf8'));
      console.log(JSON.stringify({ delivery, event, tenant, summary, contracts }));
    }
    res.writeHead(204).end();
  });
});

server.listen(Number(process.env.PORT ?? 8081), '127.0.0.1', () => {
  console.log(JSON.stringify({ listening: `http://127.0.0.1:${server.address().port}` }));
});
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => server.close(() => process.exit(0)));
