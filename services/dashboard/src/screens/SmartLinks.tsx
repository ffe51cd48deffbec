import { useState } from 'preact/hooks';
import { api, call } from '../api/client';
import type { SmartLink } from '../api/types';
import { BASE, Link, navigate } from '../router';
import { Badge, Checkbox, ConfirmButton, CopyButton, CopyValue, Empty, ErrorMessage, Loading, Page, Pager, Select, ShownOnce, Table, TextField, useAction, useLoad, usePager, when } from '../ui';
import { listCalendars } from './Calendars';
import { useCanManage } from '../session';

/** Smart links: addresses forms and webhooks post to, each submission becoming an event. */
export function SmartLinksScreen() {
  const canManage = useCanManage();
  const links = useLoad(() => call(api.GET('/api/smart-links')).then((r) => r.data), []);
  const calendars = useLoad(listCalendars, []);
  const [created, setCreated] = useState<SmartLink | null>(null);
  const [form, setForm] = useState({ name: '', calendar: '', requires_approval: false, signed: true, default_duration: '60' });
  const save = useAction();
  const calendarOptions = (calendars.data ?? []).map((c): [string, string] => [c.public_id, c.name]);
  const calendarName = (uid: string) => calendars.data?.find((c) => c.uid === uid || c.public_id === uid)?.name ?? '';
  const submit = (e: Event) => {
    e.preventDefault();
    void save.run(async () => {
      const res = await call(
        api.POST('/api/smart-links', {
          body: { name: form.name, calendar: form.calendar || calendarOptions[0]?.[0] || '', requires_approval: form.requires_approval, signed: form.signed, default_duration: Number(form.default_duration) },
        }),
      );
      setCreated(res.data);
      setForm({ ...form, name: '' });
      links.reload();
    });
  };
  return (
    <Page title="Smart links">
      {created ? (
        <div class="card">
          <h2>“{created.name}” is ready</h2>
          <CopyValue label="URL" value={created.url} />
          {created.signing_secret ? <ShownOnce label="Signing secret" value={created.signing_secret} /> : null}
        </div>
      ) : null}
      <ErrorMessage error={links.error} />
      {links.loading ? <Loading /> : null}
      {links.data && links.data.length === 0 ? <Empty>No smart links yet.</Empty> : null}
      {links.data && links.data.length > 0 ? (
        <Table caption="Smart links">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Calendar</th>
              <th scope="col">Settings</th>
              <th scope="col">URL</th>
            </tr>
          </thead>
          <tbody>
            {links.data.map((l) => (
              <tr key={l.id}>
                <td>
                  <Link href={`${BASE}/smart-links/${l.id}`}>{l.name}</Link>
                </td>
                <td>{calendarName(l.calendar_uid)}</td>
                <td>
                  {l.is_active ? <Badge tone="ok">active</Badge> : <Badge>paused</Badge>} {l.requires_approval ? <Badge tone="warn">approval</Badge> : null} {l.signed ? <Badge tone="info">signed</Badge> : null}
                </td>
                <td>
                  <CopyButton text={l.url} label="Copy URL" what={`of ${l.name}`} />
                </td>
              </tr>
            ))}
          </tbody>
        </Table>
      ) : null}
      {!canManage ? <p class="muted">Admins and owners create and change smart links.</p> : null}
      {canManage ? (
      <form class="card form" onSubmit={submit} noValidate>
        <h2>New smart link</h2>
        <ErrorMessage error={save.error} shownFields={['name', 'calendar', 'default_duration']} />
        <div class="row">
          <TextField label="Name" required value={form.name} onValue={(name) => setForm({ ...form, name })} error={save.fieldError('name')} />
          <Select label="Calendar" value={form.calendar || calendarOptions[0]?.[0] || ''} onValue={(calendar) => setForm({ ...form, calendar })} options={calendarOptions} error={save.fieldError('calendar')} />
          <TextField label="Default length (minutes)" type="number" min={1} value={form.default_duration} onValue={(default_duration) => setForm({ ...form, default_duration })} error={save.fieldError('default_duration')} />
        </div>
        <Checkbox label="Signed: submissions must carry a signature made with the link’s secret" checked={form.signed} onChecked={(signed) => setForm({ ...form, signed })} />
        <Checkbox label="Requires approval: events wait in the approval queue" checked={form.requires_approval} onChecked={(requires_approval) => setForm({ ...form, requires_approval })} />
        <div class="form-actions">
          <button type="submit" disabled={save.busy}>
            {save.busy ? 'Creating…' : 'Create smart link'}
          </button>
        </div>
      </form>
      ) : null}
    </Page>
  );
}

const STATUS_TONE = { queued: 'info', processed: 'ok', duplicate: undefined, failed: 'bad' } as const;

/** One smart link: its settings, secret rotation and submissions log. */
export function SmartLinkScreen({ sl }: { sl: string }) {
  const canManage = useCanManage();
  const link = useLoad(() => call(api.GET('/api/smart-links/{sl}', { params: { path: { sl } } })).then((r) => r.data), [sl]);
  const [status, setStatus] = useState<'' | 'queued' | 'processed' | 'duplicate' | 'failed'>('');
  const pager = usePager(status);
  const submissions = useLoad(() => call(api.GET('/api/smart-links/{sl}/submissions', { params: { path: { sl }, query: { status: status || undefined, cursor: pager.cursor, per_page: 50 } } })), [sl, status, pager.cursor]);
  const [secret, setSecret] = useState<string | null>(null);
  const act = useAction();
  if (link.loading && !link.data) return <Loading />;
  if (!link.data) return <ErrorMessage error={link.error} />;
  const l = link.data;
  const rotate = () =>
    void act.run(async () => {
      const res = await call(api.POST('/api/smart-links/{sl}/rotate-secret', { params: { path: { sl } } }));
      setSecret(res.data.signing_secret ?? null);
      link.reload();
    });
  const setActive = (is_active: boolean) =>
    void act.run(async () => {
      const calendar = (await listCalendars()).find((c) => c.uid === l.calendar_uid || c.public_id === l.calendar_uid)?.public_id ?? '';
      await call(api.PUT('/api/smart-links/{sl}', { params: { path: { sl } }, body: { name: l.name, calendar, requires_approval: l.requires_approval, signed: l.signed, default_duration: l.default_duration, is_active } }));
      link.reload();
    });
  return (
    <Page title={`Smart link: ${l.name}`}>
      <section class="card" aria-labelledby="sl-settings">
        <h2 id="sl-settings">Address and secret</h2>
        <CopyValue label="URL" value={l.url} />
        <p>
          {l.is_active ? <Badge tone="ok">active</Badge> : <Badge>paused</Badge>} {l.requires_approval ? <Badge tone="warn">requires approval</Badge> : null} {l.signed ? <Badge tone="info">signed</Badge> : <Badge>unsigned</Badge>} · default length {l.default_duration} minutes
        </p>
        {l.previous_secret_expires_at ? <p class="muted">The previous secret still verifies until {when(l.previous_secret_expires_at)}.</p> : null}
        {secret ? <ShownOnce label="Signing secret" value={secret} /> : null}
        <ErrorMessage error={act.error} />
        {canManage ? (
        <div class="form-actions">
          {l.signed ? (
            <ConfirmButton label="Rotate secret" question="Make a new secret? The old one keeps working for 24 hours." confirmLabel="Rotate" danger={false} busy={act.busy} onConfirm={rotate} />
          ) : null}
          <button type="button" class="secondary small" disabled={act.busy} onClick={() => setActive(!l.is_active)}>
            {l.is_active ? 'Pause' : 'Resume'}
          </button>
          <ConfirmButton
            label="Delete"
            question={`Delete ${l.name}? Its address stops taking submissions.`}
            busy={act.busy}
            onConfirm={() =>
              void act.run(async () => {
                await call(api.DELETE('/api/smart-links/{sl}', { params: { path: { sl } } }));
                navigate(`${BASE}/smart-links`);
              })
            }
          />
        </div>
        ) : null}
      </section>
      <section class="card" aria-labelledby="sl-subs">
        <h2 id="sl-subs">Submissions</h2>
        <div class="row end">
          <Select label="Status" value={status} onValue={setStatus} options={[['', 'All'], ['queued', 'Queued'], ['processed', 'Processed'], ['duplicate', 'Duplicate'], ['failed', 'Failed']]} />
          <button type="button" class="secondary" onClick={submissions.reload}>
            Refresh
          </button>
        </div>
        <ErrorMessage error={submissions.error} />
        {submissions.data && submissions.data.data.length === 0 ? <Empty>No submissions{status ? ' with that status' : ''}.</Empty> : null}
        {submissions.data && submissions.data.data.length > 0 ? (
          <>
            <Table caption="Submissions">
              <thead>
                <tr>
                  <th scope="col">Received</th>
                  <th scope="col">Status</th>
                  <th scope="col">Event or error</th>
                </tr>
              </thead>
              <tbody>
                {submissions.data.data.map((s) => (
                  <tr key={s.id}>
                    <td>{when(s.received_at)}</td>
                    <td>
                      <Badge tone={STATUS_TONE[s.status]}>{s.status}</Badge>
                    </td>
                    <td>{s.error ? <span class="error">{s.error}</span> : s.event_public_id ? <code>{s.event_public_id}</code> : '—'}</td>
                  </tr>
                ))}
              </tbody>
            </Table>
            <Pager pager={pager} nextCursor={submissions.data.meta.next_cursor} />
          </>
        ) : null}
      </section>
    </Page>
  );
}
