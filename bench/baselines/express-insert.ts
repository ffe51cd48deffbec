import express from 'express';
import { Pool } from 'pg';

/**
 * Baseline: what one would write without a queue. A bare Express 5 app that parses the form
 * (express.urlencoded), INSERTs one row per submission into Postgres through a pool of 10
 * (pg's defaults otherwise), and answers 202 with the row's id once the INSERT is done.
 * The table is its own, created here in DATABASE_URL's database.
 */
const TABLE = 'baseline_submissions';
// named so the benchmark can find its connections' backends
const pool = new Pool({ connectionString: process.env.DATABASE_URL, max: 10, application_name: 'express-insert' });

const INSERT = `INSERT INTO ${TABLE} (title, start, duration, timezone, location, description, name, email)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`;

async function main(): Promise<void> {
  await pool.query(`CREATE TABLE IF NOT EXISTS ${TABLE} (
    id bigserial PRIMARY KEY,
    title text NOT NULL,
    start text,
    duration integer,
    timezone text,
    location text,
    description text,
    name text,
    email text,
    received_at timestamptz NOT NULL DEFAULT now()
  )`);
  const app = express();
  app.use(express.urlencoded({ extended: false }));
  app.get('/healthz', (_req, res) => {
    res.send('ok');
  });
  app.post('/s/:key', async (req, res) => {
    const f = req.body as Record<string, string | undefined>;
    try {
      const { rows } = await pool.query<{ id: string }>(INSERT, [
        f.title ?? '',
        f.start ?? null,
        f.duration ? Number(f.duration) : null,
        f.timezone ?? null,
        f.location ?? null,
        f.description ?? null,
        f.name ?? null,
        f.email ?? null,
      ]);
      res.status(202).json({ data: { id: `sub_${rows[0].id}`, status: 'received' } });
    } catch {
      res.status(503).json({ error: 'unavailable' });
    }
  });
  app.listen(Number(process.env.PORT), '127.0.0.1');
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
