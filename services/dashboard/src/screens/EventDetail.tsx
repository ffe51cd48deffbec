import { useEffect, useRef, useState } from 'preact/hooks';
import { api, call, download } from '../api/client';
import type { AnalyticsRow, EventFull } from '../api/types';
import { BASE, Link, navigate } from '../router';
import { Badge, Checkbox, ConfirmButton, CopyValue, Empty, ErrorMessage, Loading, Notice, Page, Pager, Select, Table, TextArea, useAction, useLoad, usePager, when } from '../ui';
import { statusBadge } from './Events';
import { PLATFORMS } from '../../../../shared/calendar/platforms';

const LINK_LABELS: Record<string, string> = {
  event_page: 'Event page',
  auto: 'Add to calendar (any device)',
  google: 'Google Calendar',
  apple: 'Apple Calendar',
  outlook: 'Outlook (desktop)',
  outlook_web: 'Outlook.com',
  office365: 'Office 365',
  yahoo: 'Yahoo Calendar',
  ics: '.ics file',
};

/** One event: what it is, its links and snippets, RSVPs, invitees and analytics. */
export function EventDetailScreen({ cal, evt }: { cal: string; evt: string }) {
  const event = useLoad(() => call(api.GET('/api/calendars/{cal}/events/{evt}', { params: { path: { cal, evt }, query: { with_html: true } } })), [cal, evt]);
  if (event.loading && !event.data) return <Loading />;
  if (!event.data) return <ErrorMessage error={event.error} />;
  const e = event.data.data;
  return (
    <Page
      title={e.title}
      actions={
        <Link class="button secondary" href={`${BASE}/events/${cal}/${evt}/edit`}>
          Edit
        </Link>
      }
    >
      <section class="card" aria-labelledby="ev-when">
        <h2 id="ev-when" class="visually-hidden">
          Details
        </h2>
        <p class="lead">
          {e.date_range_formatted} {statusBadge(e)} {e.is_protected ? <Badge>access code</Badge> : null}
        </p>
        {e.timezone_readable ? <p class="muted">{e.timezone_readable}</p> : null}
        {e.recurrence_text ? <p>{e.recurrence_text}</p> : null}
        {e.location ? <p>{e.location}</p> : null}
        <p class="muted">
          Calendar: <Link href={`${BASE}/calendars/${cal}`}>{e.calendar.name}</Link>
        </p>
        {e.status === 'pending' ? <ApproveButtons evt={evt} onDone={event.reload} /> : null}
      </section>
      <Links event={event.data} />
      {e.has_rsvp ? <Rsvps cal={cal} evt={evt} /> : null}
      <Invitees cal={cal} evt={evt} />
      <Analytics evt={evt} />
      <DeleteEvent cal={cal} evt={evt} title={e.title} hasInvites={e.has_calendar_invites} />
    </Page>
  );
}

function ApproveButtons({ evt, onDone }: { evt: string; onDone: () => void }) {
  const { busy, error, run } = useAction();
  const act = (what: 'approve' | 'reject') =>
    void run(async () => {
      if (what === 'approve') await call(api.POST('/api/events/{evt}/approve', { params: { path: { evt } } }));
      else await call(api.POST('/api/events/{evt}/reject', { params: { path: { evt } } }));
      onDone();
    });
  return (
    <div class="form-actions">
      <ErrorMessage error={error} />
      <button type="button" disabled={busy} onClick={() => act('approve')}>
        Approve
      </button>
      <button type="button" class="danger" disabled={busy} onClick={() => act('reject')}>
        Reject
      </button>
    </div>
  );
}

function Links({ event }: { event: EventFull }) {
  // `html` names each variant; `html_snippets` (asked for with with_html) is its markup.
  const snippets: Record<string, string> = event.html_snippets ?? {};
  return (
    <section class="card" aria-labelledby="ev-links">
      <h2 id="ev-links">Links</h2>
      {Object.entries(event.links).map(([key, url]) => (
        <CopyValue key={key} label={LINK_LABELS[key] ?? key} value={url} />
      ))}
      <details>
        <summary>HTML snippets</summary>
        {Object.entries(snippets).map(([key, html]) => (
          <CopyValue key={key} label={(event.html as Record<string, string>)[key] ?? key} value={html} />
        ))}
      </details>
    </section>
  );
}

function Rsvps({ cal, evt }: { cal: string; evt: string }) {
  const [answer, setAnswer] = useState<'' | 'yes' | 'maybe' | 'no'>('');
  const pager = usePager(answer);
  const rsvps = useLoad(() => call(api.GET('/api/calendars/{cal}/events/{evt}/rsvps', { params: { path: { cal, evt }, query: { answer: answer || undefined, cursor: pager.cursor, per_page: 50 } } })), [cal, evt, answer, pager.cursor]);
  const exporting = useAction();
  const remove = useAction();
  const totals = rsvps.data?.meta.totals;
  return (
    <section class="card" aria-labelledby="ev-rsvps">
      <h2 id="ev-rsvps">RSVPs</h2>
      {totals ? (
        <p class="totals" role="status">
          <Badge tone="ok">{totals.yes} yes</Badge> <Badge tone="info">{totals.maybe} maybe</Badge> <Badge>{totals.no} no</Badge>
        </p>
      ) : null}
      <div class="row end">
        <Select label="Answer" value={answer} onValue={setAnswer} options={[['', 'All answers'], ['yes', 'Yes'], ['maybe', 'Maybe'], ['no', 'No']]} />
        <button type="button" class="secondary" disabled={exporting.busy} onClick={() => void exporting.run(() => download(`/api/calendars/${cal}/events/${evt}/rsvps.csv`, `rsvps-${evt}.csv`))}>
          {exporting.busy ? 'Exporting…' : 'Export CSV'}
        </button>
      </div>
      <ErrorMessage error={rsvps.error ?? exporting.error ?? remove.error} />
      {rsvps.data && rsvps.data.data.length === 0 ? <Empty>No RSVPs yet.</Empty> : null}
      {rsvps.data && rsvps.data.data.length > 0 ? (
        <>
          <Table caption="RSVPs">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Email</th>
                <th scope="col">Answer</th>
                <th scope="col">Answered</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {rsvps.data.data.map((r) => (
                <tr key={r.id}>
                  <td>{r.name}</td>
                  <td>{r.email}</td>
                  <td>{r.answer}</td>
                  <td>{when(r.updated_at)}</td>
                  <td>
                    <ConfirmButton
                      label="Remove"
                      question={`Remove ${r.name}’s answer?`}
                      busy={remove.busy}
                      onConfirm={() =>
                        void remove.run(async () => {
                          await call(api.DELETE('/api/calendars/{cal}/events/{evt}/rsvps/{rsvp}', { params: { path: { cal, evt, rsvp: r.id } } }));
                          rsvps.reload();
                        })
                      }
                    />
                  </td>
                </tr>
              ))}
            </tbody>
          </Table>
          <Pager pager={pager} nextCursor={rsvps.data.meta.next_cursor} />
        </>
      ) : null}
    </section>
  );
}

const RESPONSE: Record<string, string> = { accepted: 'Accepted', declined: 'Declined', tentative: 'Maybe' };

/** "Ann <ann@example.com>", "ann@example.com" or "Ann, ann@example.com", one a line. */
function parseInvitees(text: string): Array<{ email: string; name?: string }> {
  return text
    .split(/[\n;]+/)
    .map((line) => line.trim())
    .filter(Boolean)
    .map((line) => {
      const angle = /^(.*)<([^<>]+)>$/.exec(line);
      if (angle) return { email: angle[2].trim(), name: angle[1].trim().replace(/^"|"$/g, '') || undefined };
      const comma = line.split(',').map((s) => s.trim());
      if (comma.length === 2 && comma[1].includes('@')) return { email: comma[1], name: comma[0] || undefined };
      return { email: line };
    });
}

function Invitees({ cal, evt }: { cal: string; evt: string }) {
  const pager = usePager('');
  const invitees = useLoad(() => call(api.GET('/api/calendars/{cal}/events/{evt}/invites', { params: { path: { cal, evt }, query: { cursor: pager.cursor, per_page: 50 } } })), [cal, evt, pager.cursor]);
  const [text, setText] = useState('');
  const [added, setAdded] = useState<string | null>(null);
  const invite = useAction();
  const remove = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    setAdded(null);
    void invite.run(async () => {
      const res = await call(api.POST('/api/calendars/{cal}/events/{evt}/invites', { params: { path: { cal, evt } }, body: { invitees: parseInvitees(text) } }));
      setAdded(`${res.meta.added} invited${res.meta.already_invited ? `, ${res.meta.already_invited} already were` : ''}.`);
      setText('');
      invitees.reload();
    });
  };
  return (
    <section class="card" aria-labelledby="ev-invitees">
      <h2 id="ev-invitees">Invitees</h2>
      <ErrorMessage error={invitees.error ?? remove.error} />
      {invitees.data && invitees.data.data.length === 0 ? <Empty>Nobody is invited yet.</Empty> : null}
      {invitees.data && invitees.data.data.length > 0 ? (
        <>
          <Table caption="Invitees">
            <thead>
              <tr>
                <th scope="col">Invitee</th>
                <th scope="col">Response</th>
                <th scope="col">Last email</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {invitees.data.data.map((i) => (
                <tr key={i.id}>
                  <td>
                    {i.name ? <div>{i.name}</div> : null}
                    <div class="muted">{i.email}</div>
                  </td>
                  <td>
                    {i.response ? RESPONSE[i.response] : 'No answer'}
                    {i.response_stale ? <div class="muted">to an earlier version</div> : null}
                  </td>
                  <td>
                    {i.last_delivery ? (
                      <>
                        {i.last_delivery.kind} · <Badge tone={i.last_delivery.status === 'failed' ? 'bad' : i.last_delivery.status === 'sent' ? 'ok' : undefined}>{i.last_delivery.status}</Badge>
                        <div class="muted">{i.last_delivery.error ?? when(i.last_delivery.sent_at)}</div>
                      </>
                    ) : (
                      '—'
                    )}
                  </td>
                  <td>
                    <ConfirmButton
                      label="Remove"
                      question={`Remove ${i.email}? They are emailed a cancellation.`}
                      busy={remove.busy}
                      onConfirm={() =>
                        void remove.run(async () => {
                          await call(api.DELETE('/api/calendars/{cal}/events/{evt}/invites/{inv}', { params: { path: { cal, evt, inv: i.id } } }));
                          invitees.reload();
                        })
                      }
                    />
                  </td>
                </tr>
              ))}
            </tbody>
          </Table>
          <Pager pager={pager} nextCursor={invitees.data.meta.next_cursor} />
        </>
      ) : null}
      <form onSubmit={submit} noValidate>
        <h3>Invite more</h3>
        {added ? <Notice>{added}</Notice> : null}
        <ErrorMessage error={invite.error} shownFields={['invitees']} />
        <TextArea label="Email addresses" hint="One a line: ann@example.com, or Ann Lee <ann@example.com>. Each is emailed an invitation." value={text} onValue={setText} rows={3} error={invite.fieldError('invitees')} />
        <button type="submit" disabled={invite.busy || !text.trim()}>
          {invite.busy ? 'Inviting…' : 'Send invitations'}
        </button>
      </form>
    </section>
  );
}

function Analytics({ evt }: { evt: string }) {
  const data = useLoad(() => call(api.GET('/api/analytics', { params: { query: { event: evt, group_by: 'day' } } })), [evt]);
  return (
    <section class="card" aria-labelledby="ev-analytics">
      <h2 id="ev-analytics">Analytics, last 30 days</h2>
      <ErrorMessage error={data.error} />
      {data.data ? (
        <>
          <p class="totals">
            {data.data.meta.totals.views} views · {data.data.meta.totals.adds} adds to calendars · {data.data.meta.totals.feed_fetches} feed fetches · {data.data.meta.totals.rsvps} RSVPs
            {data.data.meta.totals.submissions ? ` · ${data.data.meta.totals.submissions} smart-link submissions` : null}
          </p>
          <Chart rows={data.data.data} range={data.data.meta} />
          <ByPlatform evt={evt} />
        </>
      ) : null}
    </section>
  );
}

/** What each add-to-calendar platform was used for over the same days: adds and feed fetches. */
function ByPlatform({ evt }: { evt: string }) {
  const data = useLoad(() => call(api.GET('/api/analytics', { params: { query: { event: evt, group_by: 'platform' } } })), [evt]);
  const rows = (data.data?.data ?? []).filter((r) => r.platform && (r.adds || r.feed_fetches));
  if (data.error) return <ErrorMessage error={data.error} />;
  if (!data.data) return null;
  if (!rows.length) return <p class="muted">No one has added it to a calendar yet.</p>;
  return (
    <Table caption="Adds by platform">
      <thead>
        <tr>
          <th scope="col">Platform</th>
          <th scope="col">Adds</th>
          <th scope="col">Feed fetches</th>
        </tr>
      </thead>
      <tbody>
        {rows
          .sort((a, b) => (b.adds ?? 0) - (a.adds ?? 0))
          .map((r) => (
            <tr key={r.platform}>
              <td>{platformName(r.platform as string)}</td>
              <td>{r.adds}</td>
              <td>{r.feed_fetches}</td>
            </tr>
          ))}
      </tbody>
    </Table>
  );
}

const platformName = (key: string) => (key === 'event' ? 'Event feed (Get updates)' : (PLATFORMS.find((p) => p.key === key)?.label ?? key));

/** uPlot, loaded when the first chart is drawn: it is not part of the first page load. */
function Chart({ rows, range }: { rows: AnalyticsRow[]; range: { from: string; to: string } }) {
  const target = useRef<HTMLDivElement>(null);
  const [failed, setFailed] = useState(false);
  useEffect(() => {
    let remove: (() => void) | null = null;
    let live = true;
    import('../chart').then(
      ({ drawDaily }) => {
        if (live && target.current) remove = drawDaily(target.current, rows, range);
      },
      () => setFailed(true),
    );
    return () => {
      live = false;
      remove?.();
    };
  }, [rows]);
  return (
    <>
      <div ref={target} class="chart" role="img" aria-label={`Views, adds, feed fetches and RSVPs per day from ${range.from} to ${range.to}`} />
      {failed ? <p class="muted">The chart could not be loaded.</p> : null}
    </>
  );
}

function DeleteEvent({ cal, evt, title, hasInvites }: { cal: string; evt: string; title: string; hasInvites: boolean }) {
  const [notify, setNotify] = useState(true);
  const { busy, error, run } = useAction();
  return (
    <section class="card" aria-labelledby="ev-delete">
      <h2 id="ev-delete">Delete</h2>
      <ErrorMessage error={error} />
      <ConfirmButton
        label="Delete event"
        question={`Delete “${title}”?`}
        busy={busy}
        onConfirm={() =>
          void run(async () => {
            await call(api.DELETE('/api/calendars/{cal}/events/{evt}', { params: { path: { cal, evt }, query: { notify_invitees: notify } } }));
            navigate(`${BASE}/events`);
          })
        }
      >
        {hasInvites ? <Checkbox label="Email invitees a cancellation" checked={notify} onChecked={setNotify} /> : null}
      </ConfirmButton>
    </section>
  );
}
