import express from 'express';

/** Baseline: a bare Express 5 app answering 202 after express.urlencoded. */
const app = express();
app.use(express.urlencoded({ extended: false }));
app.get('/healthz', (_req, res) => {
  res.send('ok');
});
app.post('/s/:key', (_req, res) => {
  res.status(202).json({ data: { id: 'sls_baseline000000', status: 'queued' } });
});
app.listen(Number(process.env.PORT), '127.0.0.1');
