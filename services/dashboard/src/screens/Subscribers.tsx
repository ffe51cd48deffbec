import { useEffect, useState } from 'preact/hooks';
import { api, call } from '../api/client';
import { useLocation } from '../router';
import { Badge, Empty, ErrorMessage, Loading, Page, Pager, Select, Table, useAction, useLoad, usePager, when } from '../ui';
import { listCalendars } from './Calendars';

const PLATFORM: Record<string, string> = { google: 'Google', apple: 'Apple', outlook_web: 'Outlook.com', office365: 'Office 365', ics: 'Feed (.ics)' };

/** A calendar's subscribers: who syncs its feed, how often; block or unblock one. */
export function SubscribersScreen() {
  const { query } = useLocation();
  const calendars = useLoad(listCalendars, []);
  const [cal, setCal] = useState(query.get('calendar') ?? '');
  const [status, setStatus] = useState<'' | 'active' | 'blocked'>('');
  useEffect(() => {
    if (!cal && calendars.data?.length) setCal(calendars.data[0].public_id);
  }, [calendars.data]);
  const pager = usePager(`${cal}/${status}`);
  const subscribers = useLoad(() => (cal ? call(api.GET('/api/calendars/{cal}/subscribers', { params: { path: { cal }, query: { status: status || undefined, cursor: pager.cursor, per_page: 50 } } })) : Promise.resolve(null)), [cal, status, pager.cursor]);
  const change = useAction();
  const setBlocked = (sub: string, blocked: boolean) =>
    void change.run(async () => {
      await call(api.PUT('/api/calendars/{cal}/subscribers/{sub}', { params: { path: { cal, sub } }, body: { status: blocked ? 'blocked' : 'active' } }));
      subscribers.reload();
    });
  const rows = subscribers.data?.data ?? [];
  return (
    <Page title="Subscribers">
      <div class="row filters-inline">
        <Select label="Calendar" value={cal} onValue={setCal} options={(calendars.data ?? []).map((c): [string, string] => [c.public_id, c.name])} />
        <Select label="Status" value={status} onValue={setStatus} options={[['', 'All'], ['active', 'Active'], ['blocked', 'Blocked']]} />
      </div>
      <ErrorMessage error={calendars.error ?? subscribers.error ?? change.error} />
      {calendars.data?.length === 0 ? <Empty>No calendars yet.</Empty> : null}
      {subscribers.loading ? <Loading /> : null}
      {subscribers.data && rows.length === 0 ? <Empty>Nobody subscribes to this calendar{status ? ' with that status' : ''}.</Empty> : null}
      {rows.length > 0 ? (
        <>
          <Table caption="Subscribers">
            <thead>
              <tr>
                <th scope="col">Subscriber</th>
                <th scope="col">Platform</th>
                <th scope="col">Syncs</th>
                <th scope="col">Status</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((s) => (
                <tr key={s.id}>
                  <td>
                    {s.name ?? <span class="muted">No name</span>}
                    {s.email ? <div class="muted">{s.email}</div> : null}
                    <div class="muted">Since {when(s.created_at)}</div>
                  </td>
                  <td>{PLATFORM[s.platform] ?? s.platform}</td>
                  <td>
                    {s.sync_count}
                    <div class="muted">last {when(s.last_synced_at)}</div>
                  </td>
                  <td>{s.status === 'blocked' ? <Badge tone="bad">blocked</Badge> : <Badge tone="ok">active</Badge>}</td>
                  <td>
                    {s.status === 'blocked' ? (
                      <button type="button" class="secondary small" disabled={change.busy} onClick={() => setBlocked(s.id, false)} aria-label={`Unblock ${s.name ?? s.id}`}>
                        Unblock
                      </button>
                    ) : (
                      <button type="button" class="danger small" disabled={change.busy} onClick={() => setBlocked(s.id, true)} aria-label={`Block ${s.name ?? s.id}`}>
                        Block
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </Table>
          <Pager pager={pager} nextCursor={subscribers.data?.meta.next_cursor} />
        </>
      ) : null}
    </Page>
  );
}
