import { useState } from 'preact/hooks';
import { api, call } from '../api/client';
import { BASE, Link } from '../router';
import { asApiError, Empty, ErrorMessage, Loading, Notice, Page, Pager, Table, useLoad, usePager } from '../ui';

/** Events from smart links that wait for approval: approve or reject each, or several at once. */
export function ApprovalsScreen() {
  const pager = usePager('');
  const pending = useLoad(() => call(api.GET('/api/events', { params: { query: { status: 'pending', range: 'all', per_page: 50, cursor: pager.cursor } } })), [pager.cursor]);
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<{ done: string; failures: string[] } | null>(null);
  const rows = pending.data?.data ?? [];

  const act = async (what: 'approve' | 'reject', ids: string[]) => {
    setBusy(true);
    setResult(null);
    const failures: string[] = [];
    let done = 0;
    for (const evt of ids) {
      try {
        if (what === 'approve') await call(api.POST('/api/events/{evt}/approve', { params: { path: { evt } } }));
        else await call(api.POST('/api/events/{evt}/reject', { params: { path: { evt } } }));
        done++;
      } catch (err) {
        const title = rows.find((r) => r.public_id === evt)?.title ?? evt;
        failures.push(`${title}: ${asApiError(err).message}`);
      }
    }
    setBusy(false);
    setSelected(new Set());
    setResult({ done: `${done} event${done === 1 ? '' : 's'} ${what === 'approve' ? 'approved' : 'rejected'}.`, failures });
    pending.reload();
  };
  const toggle = (id: string, on: boolean) => {
    const next = new Set(selected);
    if (on) next.add(id);
    else next.delete(id);
    setSelected(next);
  };
  const allSelected = rows.length > 0 && rows.every((r) => selected.has(r.public_id));

  return (
    <Page title="Approval queue">
      <p class="muted">Events that smart links requiring approval created. Nothing is published until it is approved.</p>
      {result ? (
        <Notice>
          <p>{result.done}</p>
          {result.failures.length ? (
            <ul class="error">
              {result.failures.map((f) => (
                <li key={f}>{f}</li>
              ))}
            </ul>
          ) : null}
        </Notice>
      ) : null}
      <ErrorMessage error={pending.error} />
      {pending.loading ? <Loading /> : null}
      {pending.data && rows.length === 0 ? <Empty>Nothing waits for approval.</Empty> : null}
      {rows.length > 0 ? (
        <>
          <div class="bulk" role="group" aria-label="Selected events">
            <span>{selected.size} selected</span>
            <button type="button" disabled={busy || selected.size === 0} onClick={() => void act('approve', [...selected])}>
              Approve selected
            </button>
            <button type="button" class="danger" disabled={busy || selected.size === 0} onClick={() => void act('reject', [...selected])}>
              Reject selected
            </button>
          </div>
          <Table caption="Events waiting for approval">
            <thead>
              <tr>
                <th scope="col">
                  <input type="checkbox" aria-label="Select all" checked={allSelected} onChange={(e) => setSelected(e.currentTarget.checked ? new Set(rows.map((r) => r.public_id)) : new Set())} />
                </th>
                <th scope="col">Event</th>
                <th scope="col">When</th>
                <th scope="col">Calendar</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((e) => (
                <tr key={e.public_id}>
                  <td>
                    <input type="checkbox" aria-label={`Select ${e.title}`} checked={selected.has(e.public_id)} onChange={(ev) => toggle(e.public_id, ev.currentTarget.checked)} />
                  </td>
                  <td>
                    <Link href={`${BASE}/events/${e.calendar.public_id}/${e.public_id}`}>{e.title}</Link>
                    {e.location ? <div class="muted">{e.location}</div> : null}
                  </td>
                  <td>{e.date_range_formatted}</td>
                  <td>{e.calendar.name}</td>
                  <td class="nowrap">
                    <button type="button" class="small" disabled={busy} onClick={() => void act('approve', [e.public_id])} aria-label={`Approve ${e.title}`}>
                      Approve
                    </button>{' '}
                    <button type="button" class="danger small" disabled={busy} onClick={() => void act('reject', [e.public_id])} aria-label={`Reject ${e.title}`}>
                      Reject
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </Table>
          <Pager pager={pager} nextCursor={pending.data?.meta.next_cursor} />
        </>
      ) : null}
    </Page>
  );
}
