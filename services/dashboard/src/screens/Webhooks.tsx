import { useState } from 'preact/hooks';
import { WEBHOOK_EVENT_TYPES } from '../../../../shared/webhooks/event-types';
import { api, call } from '../api/client';
import type { Webhook, WebhookEventType } from '../api/types';
import { BASE, Link, navigate } from '../router';
import { Badge, Checkbox, ConfirmButton, Empty, ErrorMessage, Loading, Notice, Page, Pager, Select, ShownOnce, Table, TextField, useAction, useLoad, usePager, when } from '../ui';
import { useCanManage } from '../session';

// The service's own list: a type added there is offered here (and must be one the API takes).
const EVENT_TYPES: readonly WebhookEventType[] = WEBHOOK_EVENT_TYPES;

function state(w: Webhook) {
  if (!w.is_active) return <Badge>{w.disabled_reason ? `disabled: ${w.disabled_reason}` : 'paused'}</Badge>;
  if (w.failing_since) return <Badge tone="warn">failing since {when(w.failing_since)}</Badge>;
  return <Badge tone="ok">active</Badge>;
}

/** Outbound webhooks: create (secret shown once), see each one's state. */
export function WebhooksScreen() {
  const canManage = useCanManage();
  const hooks = useLoad(() => call(api.GET('/api/webhooks')).then((r) => r.data), []);
  const [form, setForm] = useState({ url: '', description: '', types: [] as WebhookEventType[] });
  const [created, setCreated] = useState<{ url: string; secret: string } | null>(null);
  const save = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    void save.run(async () => {
      const res = await call(api.POST('/api/webhooks', { body: { url: form.url, description: form.description.trim() || null, ...(form.types.length ? { event_types: form.types } : {}) } }));
      setCreated({ url: res.data.url, secret: res.data.secret });
      setForm({ url: '', description: '', types: [] });
      hooks.reload();
    });
  };
  return (
    <Page title="Webhooks">
      {created ? (
        <ShownOnce label="Signing secret" value={created.secret}>
          <p class="muted">Deliveries to {created.url} are signed with it (Standard Webhooks).</p>
        </ShownOnce>
      ) : null}
      <ErrorMessage error={hooks.error} />
      {hooks.loading ? <Loading /> : null}
      {hooks.data && hooks.data.length === 0 ? <Empty>No webhooks yet.</Empty> : null}
      {hooks.data && hooks.data.length > 0 ? (
        <Table caption="Webhooks">
          <thead>
            <tr>
              <th scope="col">Endpoint</th>
              <th scope="col">Events</th>
              <th scope="col">State</th>
            </tr>
          </thead>
          <tbody>
            {hooks.data.map((w) => (
              <tr key={w.id}>
                <td>
                  <Link href={`${BASE}/webhooks/${w.id}`}>{w.url}</Link>
                  {w.description ? <div class="muted">{w.description}</div> : null}
                </td>
                <td>{w.event_types?.length ? w.event_types.join(', ') : 'all'}</td>
                <td>{state(w)}</td>
              </tr>
            ))}
          </tbody>
        </Table>
      ) : null}
      {!canManage ? <p class="muted">Admins and owners create and change webhooks.</p> : null}
      {canManage ? (
      <form class="card form" onSubmit={submit} noValidate>
        <h2>New webhook</h2>
        <ErrorMessage error={save.error} shownFields={['url', 'description', 'event_types']} />
        <TextField label="Endpoint URL" type="url" required placeholder="https://example.com/hooks/calendar" value={form.url} onValue={(url) => setForm({ ...form, url })} error={save.fieldError('url')} />
        <TextField label="Description" value={form.description} onValue={(description) => setForm({ ...form, description })} error={save.fieldError('description')} />
        <fieldset class="types">
          <legend>Events to send (none chosen: all)</legend>
          {EVENT_TYPES.map((t) => (
            <Checkbox key={t} label={t} checked={form.types.includes(t)} onChecked={(on) => setForm({ ...form, types: on ? [...form.types, t] : form.types.filter((x) => x !== t) })} />
          ))}
        </fieldset>
        <div class="form-actions">
          <button type="submit" disabled={save.busy}>
            {save.busy ? 'Creating…' : 'Create webhook'}
          </button>
        </div>
      </form>
      ) : null}
    </Page>
  );
}

/** One webhook: test it, rotate its secret, pause or delete it; its deliveries, each retried by hand. */
export function WebhookScreen({ wh }: { wh: string }) {
  const canManage = useCanManage();
  const hook = useLoad(() => call(api.GET('/api/webhooks/{wh}', { params: { path: { wh } } })).then((r) => r.data), [wh]);
  const [status, setStatus] = useState<'' | 'pending' | 'succeeded' | 'failed'>('');
  const pager = usePager(status);
  const deliveries = useLoad(() => call(api.GET('/api/webhooks/{wh}/deliveries', { params: { path: { wh }, query: { status: status || undefined, cursor: pager.cursor, per_page: 25 } } })), [wh, status, pager.cursor]);
  const [secret, setSecret] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const act = useAction();
  if (hook.loading && !hook.data) return <Loading />;
  if (!hook.data) return <ErrorMessage error={hook.error} />;
  const w = hook.data;
  const run = (what: () => Promise<void>) =>
    void act.run(async () => {
      setNotice(null);
      await what();
    });
  return (
    <Page title="Webhook">
      <section class="card" aria-labelledby="wh-h">
        <h2 id="wh-h" class="break">
          {w.url}
        </h2>
        <p>
          {state(w)} · {w.event_types?.length ? w.event_types.join(', ') : 'all events'}
        </p>
        {secret ? <ShownOnce label="Signing secret" value={secret} /> : null}
        {notice ? <Notice>{notice}</Notice> : null}
        <ErrorMessage error={act.error} />
        {canManage ? (
        <div class="form-actions">
          <button
            type="button"
            class="secondary small"
            disabled={act.busy}
            onClick={() =>
              run(async () => {
                const res = await call(api.POST('/api/webhooks/{wh}/test', { params: { path: { wh } } }));
                setNotice(`A test delivery is queued (${res.data.delivery_id}).`);
                deliveries.reload();
              })
            }
          >
            Send a test
          </button>
          <ConfirmButton
            label="Rotate secret"
            question="Make a new signing secret?"
            confirmLabel="Rotate"
            danger={false}
            busy={act.busy}
            onConfirm={() =>
              run(async () => {
                const res = await call(api.POST('/api/webhooks/{wh}/rotate-secret', { params: { path: { wh } } }));
                setSecret(res.data.secret);
              })
            }
          />
          <button
            type="button"
            class="secondary small"
            disabled={act.busy}
            onClick={() =>
              run(async () => {
                await call(api.PUT('/api/webhooks/{wh}', { params: { path: { wh } }, body: { url: w.url, event_types: (w.event_types ?? []) as WebhookEventType[], description: w.description, is_active: !w.is_active } }));
                hook.reload();
              })
            }
          >
            {w.is_active ? 'Pause' : 'Resume'}
          </button>
          <ConfirmButton
            label="Delete"
            question="Delete this webhook?"
            busy={act.busy}
            onConfirm={() =>
              run(async () => {
                await call(api.DELETE('/api/webhooks/{wh}', { params: { path: { wh } } }));
                navigate(`${BASE}/webhooks`);
              })
            }
          />
        </div>
        ) : null}
      </section>
      <section class="card" aria-labelledby="wh-d">
        <h2 id="wh-d">Deliveries</h2>
        <div class="row end">
          <Select label="Status" value={status} onValue={setStatus} options={[['', 'All'], ['pending', 'Pending'], ['succeeded', 'Succeeded'], ['failed', 'Failed']]} />
          <button type="button" class="secondary" onClick={deliveries.reload}>
            Refresh
          </button>
        </div>
        <ErrorMessage error={deliveries.error} />
        {deliveries.data && deliveries.data.data.length === 0 ? <Empty>No deliveries{status ? ' with that status' : ''}.</Empty> : null}
        {deliveries.data && deliveries.data.data.length > 0 ? (
          <>
            <Table caption="Deliveries">
              <thead>
                <tr>
                  <th scope="col">Event</th>
                  <th scope="col">Status</th>
                  <th scope="col">Last attempt</th>
                  <th scope="col">
                    <span class="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {deliveries.data.data.map((d) => {
                  const last = d.attempts[d.attempts.length - 1];
                  return (
                    <tr key={d.id}>
                      <td>
                        {d.type}
                        <div class="muted">{when(d.created_at)}</div>
                      </td>
                      <td>
                        <Badge tone={d.status === 'succeeded' ? 'ok' : d.status === 'failed' ? 'bad' : 'info'}>{d.status}</Badge>
                        <div class="muted">
                          {d.attempts.length} attempt{d.attempts.length === 1 ? '' : 's'}
                          {d.next_attempt_at ? `, next ${when(d.next_attempt_at)}` : ''}
                        </div>
                      </td>
                      <td>{last ? `${last.status_code ?? 'no answer'}${last.error ? `: ${last.error}` : ''} (${last.duration_ms} ms)` : '—'}</td>
                      <td>
                        {d.status === 'failed' && canManage ? (
                          <button
                            type="button"
                            class="secondary small"
                            disabled={act.busy}
                            onClick={() =>
                              run(async () => {
                                await call(api.POST('/api/webhooks/{wh}/deliveries/{whd}/retry', { params: { path: { wh, whd: d.id } } }));
                                setNotice('The delivery is queued again.');
                                deliveries.reload();
                              })
                            }
                          >
                            Retry
                          </button>
                        ) : null}
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </Table>
            <Pager pager={pager} nextCursor={deliveries.data.meta.next_cursor} />
          </>
        ) : null}
      </section>
    </Page>
  );
}
