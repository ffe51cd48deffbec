import fs from 'node:fs';
import express from 'express';

/**
 * Baseline: a bare Express 5 app answering the same JSON from memory (serialized per
 * request, as ours is): the ceiling for our stack. Routes come from a JSON file:
 * [{ "method": "GET", "path": "/api/events/:evt", "query": { "search": "x" }, "status": 200, "body": … }]
 */
interface BaselineRoute {
  method: string;
  path: string;
  query?: Record<string, string>;
  status?: number;
  body: unknown;
}

const routes = JSON.parse(fs.readFileSync(process.argv[2], 'utf8')) as BaselineRoute[];
const app = express();
app.use(express.json({ limit: '1mb' }));
app.get('/healthz', (_req, res) => {
  res.json({ status: 'ok' });
});
for (const route of routes) {
  app[route.method.toLowerCase() as 'get' | 'post'](route.path, (req, res, next) => {
    const query = req.query as Record<string, string>;
    if (route.query && !Object.entries(route.query).every(([k, v]) => query[k] === v)) return next();
    res.status(route.status ?? 200).json(route.body);
  });
}
app.listen(Number(process.env.PORT), '127.0.0.1');
