import http from 'node:http';

/** Baseline: a raw node:http server that reads the body and answers 202. */
const body = JSON.stringify({ data: { id: 'sls_baseline000000', status: 'queued' } });
http
  .createServer((req, res) => {
    if (req.url === '/healthz') {
      res.end('ok');
      return;
    }
    req.on('data', () => undefined);
    req.on('end', () => {
      res.writeHead(202, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
      res.end(body);
    });
  })
  .listen(Number(process.env.PORT), '127.0.0.1');
