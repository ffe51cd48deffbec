import fs from 'node:fs';
import express from 'express';

/**
 * Baseline: a bare Express 5 app answering from memory what ours answers (the ceiling for
 * our stack): JSON (serialized per request, as ours is), text, redirects, and 304s for a
 * matching If-None-Match. Routes come from a JSON file:
 * [{ "method": "GET", "path": "/api/events/:evt", "query": { "search": "x" }, "status": 200,
 *    "body": …, "text": "…", "contentType": "text/html", "location": "https://…", "etag": "\"…\"" }]
 */
interface BaselineRoute {
  method: string;
  path: string;
  query?: Record<string, string>;
  status?: number;
  body?: unknown;
  text?: string;
  contentType?: string;
  location?: string;
  etag?: string;
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
    if (route.location) return res.redirect(route.status ?? 302, route.location);
    if (route.etag) {
      res.set('ETag', route.etag);
      if (req.headers['if-none-match'] === route.etag) return res.status(304).end();
    }
    if (route.text !== undefined) return res.status(route.status ?? 200).type(route.contentType ?? 'text/plain').send(route.text);
    res.status(route.status ?? 200).json(route.body);
  });
}
app.listen(Number(process.env.PORT), '127.0.0.1');
