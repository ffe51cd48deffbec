import { useState } from 'preact/hooks';
import { api, call } from '../api/client';
import type { EventFilters, EventItem } from '../api/types';
import { BASE, Link, navigate, useLocation } from '../router';
import { Badge, Empty, ErrorMessage, Loading, Page, Pager, Select, Table, TextField, useLoad, usePager } from '../ui';
import { listCalendars } from './Calendars';

type Filters = { range: '' | 'all' | 'upcoming' | 'past'; search: string; calendar: string; status: '' | 'approved' | 'pending' | 'rejected'; start_date: string; end_date: string; rsvp: '' | 'true' | 'false'; invites: '' | 'true' | 'false' };
const FILTER_KEYS: Array<keyof Filters> = ['range', 'search', 'calendar', 'status', 'start_date', 'end_date', 'rsvp', 'invites'];

export function statusBadge(e: Pick<EventItem, 'status' | 'is_draft'>) {
  if (e.is_draft) return <Badge>draft</Badge>;
  if (e.status === 'pending') return <Badge tone="warn">pending approval</Badge>;
  if (e.status === 'rejected') return <Badge tone="bad">rejected</Badge>;
  return null;
}

/** The API's filters from the form: empty ones left out. */
function queryOf(f: Filters, cursor: string | undefined): EventFilters {
  const q: EventFilters = { per_page: 25 };
  if (f.range) q.range = f.range;
  if (f.search.trim()) q.search = f.search.trim();
  if (f.calendar) q.calendar = f.calendar;
  if (f.status) q.status = f.status;
  if (f.start_date) q.start_date = f.start_date;
  if (f.end_date) q.end_date = f.end_date;
  if (f.rsvp) q.rsvp = f.rsvp === 'true';
  if (f.invites) q.invites = f.invites === 'true';
  if (cursor) q.cursor = cursor;
  return q;
}

/** Every event of the team, with the API's filters (kept in the address, so a filtered list can be linked to), search and pages. */
export function EventsScreen() {
  const { query } = useLocation();
  const initial = Object.fromEntries(FILTER_KEYS.map((k) => [k, query.get(k) ?? (k === 'range' ? 'upcoming' : '')])) as Filters;
  const [draft, setDraft] = useState<Filters>(initial);
  const [applied, setApplied] = useState<Filters>(initial);
  const pager = usePager(JSON.stringify(applied));
  const calendars = useLoad(listCalendars, []);
  const events = useLoad(() => call(api.GET('/api/events', { params: { query: queryOf(applied, pager.cursor) } })), [JSON.stringify(applied), pager.cursor]);
  const set = (key: keyof Filters) => (value: string) => setDraft({ ...draft, [key]: value } as Filters);

  const apply = (e: Event) => {
    e.preventDefault();
    setApplied(draft);
    const params = new URLSearchParams(Object.entries(draft).filter(([, v]) => v !== ''));
    navigate(`${BASE}/events${params.size ? `?${params}` : ''}`, { replace: true });
  };
  const calendarOptions: Array<[string, string]> = [['', 'All calendars'], ...(calendars.data ?? []).map((c): [string, string] => [c.public_id, c.name])];

  return (
    <Page
      title="Events"
      actions={
        <Link class="button" href={`${BASE}/events/new`}>
          New event
        </Link>
      }
    >
      <form class="filters card" onSubmit={apply} role="search" aria-label="Filter events">
        <TextField label="Search" type="search" hint="Title or internal name" value={draft.search} onValue={set('search')} />
        <Select label="When" value={draft.range} onValue={set('range')} options={[['upcoming', 'Upcoming'], ['past', 'Past'], ['all', 'All']]} />
        <Select label="Calendar" value={draft.calendar} onValue={set('calendar')} options={calendarOptions} />
        <Select label="Status" value={draft.status} onValue={set('status')} options={[['', 'Any'], ['approved', 'Approved'], ['pending', 'Pending approval'], ['rejected', 'Rejected']]} />
        <TextField label="Starting on or after" type="date" value={draft.start_date} onValue={set('start_date')} />
        <TextField label="Ended on or before" type="date" value={draft.end_date} onValue={set('end_date')} />
        <Select label="RSVP" value={draft.rsvp} onValue={set('rsvp')} options={[['', 'Any'], ['true', 'Takes RSVPs'], ['false', 'No RSVPs']]} />
        <Select label="Invitations" value={draft.invites} onValue={set('invites')} options={[['', 'Any'], ['true', 'With invitees'], ['false', 'Without invitees']]} />
        <div class="form-actions">
          <button type="submit">Show events</button>
        </div>
      </form>
      <ErrorMessage error={events.error} />
      {events.loading ? <Loading /> : null}
      {events.data && events.data.data.length === 0 ? <Empty>No events match.</Empty> : null}
      {events.data && events.data.data.length > 0 ? (
        <>
          <Table caption="Events">
            <thead>
              <tr>
                <th scope="col">Event</th>
                <th scope="col">When</th>
                <th scope="col">Calendar</th>
                <th scope="col">RSVPs</th>
              </tr>
            </thead>
            <tbody>
              {events.data.data.map((e) => (
                <tr key={e.public_id}>
                  <td>
                    <Link href={`${BASE}/events/${e.calendar.public_id}/${e.public_id}`}>{e.title}</Link> {statusBadge(e)}
                    {e.is_recurring ? <div class="muted">{e.recurrence_text}</div> : null}
                  </td>
                  <td>{e.date_range_formatted}</td>
                  <td>{e.calendar.name}</td>
                  <td>{e.has_rsvp ? `${e.rsvp_counts.yes} yes · ${e.rsvp_counts.maybe} maybe · ${e.rsvp_counts.no} no` : '—'}</td>
                </tr>
              ))}
            </tbody>
          </Table>
          <Pager pager={pager} nextCursor={events.data.meta.next_cursor} />
        </>
      ) : null}
    </Page>
  );
}
