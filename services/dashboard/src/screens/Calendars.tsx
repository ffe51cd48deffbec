import { useEffect, useState } from 'preact/hooks';
import { api, call } from '../api/client';
import type { Calendar, CalendarInput } from '../api/types';
import { BASE, Link, navigate } from '../router';
import { ReminderChoice } from '../reminders';
import { browserZone, TimeZoneSelect } from '../zones';
import { ConfirmButton, CopyButton, CopyValue, Empty, ErrorMessage, Loading, Notice, Page, Select, Table, TextArea, TextField, useAction, useLoad } from '../ui';

export const listCalendars = () => call(api.GET('/api/calendars')).then((r) => r.data);

export function CalendarsScreen() {
  const calendars = useLoad(listCalendars, []);
  return (
    <Page
      title="Calendars"
      actions={
        <Link class="button" href={`${BASE}/calendars/new`}>
          New calendar
        </Link>
      }
    >
      <ErrorMessage error={calendars.error} />
      {calendars.loading ? <Loading /> : null}
      {calendars.data && calendars.data.length === 0 ? <Empty>No calendars yet. Create one to hold your events.</Empty> : null}
      {calendars.data && calendars.data.length > 0 ? (
        <Table caption="Calendars">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Time zone</th>
              <th scope="col">Public page</th>
              <th scope="col">Events</th>
            </tr>
          </thead>
          <tbody>
            {calendars.data.map((c) => (
              <tr key={c.public_id}>
                <td>
                  <Link href={`${BASE}/calendars/${c.public_id}`}>{c.name}</Link>
                  {c.internal_name ? <div class="muted">{c.internal_name}</div> : null}
                </td>
                <td>{c.timezone}</td>
                <td>
                  <a href={c.public_url} target="_blank" rel="noopener noreferrer">
                    Open<span class="visually-hidden"> the page of {c.name}</span>
                  </a>{' '}
                  <CopyButton text={c.public_url} label="Copy URL" what={`of ${c.name}`} />
                </td>
                <td>
                  <Link href={`${BASE}/events?calendar=${c.public_id}`}>Events<span class="visually-hidden"> of {c.name}</span></Link>
                </td>
              </tr>
            ))}
          </tbody>
        </Table>
      ) : null}
    </Page>
  );
}

const WEEKDAYS: Array<[string, string]> = [
  ['1', 'Monday'],
  ['0', 'Sunday'],
  ['6', 'Saturday'],
  ['2', 'Tuesday'],
  ['3', 'Wednesday'],
  ['4', 'Thursday'],
  ['5', 'Friday'],
];
const LOCALES: Array<[string, string]> = [
  ['', 'The visitor’s language'],
  ['en', 'English'],
  ['de', 'Deutsch'],
  ['fr', 'Français'],
  ['es', 'Español'],
  ['pt', 'Português'],
  ['it', 'Italiano'],
  ['nl', 'Nederlands'],
  ['ja', '日本語'],
];

interface Form {
  name: string;
  internal_name: string;
  description: string;
  timezone: string;
  week_begins: string;
  locale: string;
  organizer_name: string;
  organizer_email: string;
  default_email_reminders: number[];
}

const formOf = (c: Calendar | null): Form => ({
  name: c?.name ?? '',
  internal_name: c?.internal_name ?? '',
  description: c?.description ?? '',
  timezone: c?.timezone ?? browserZone(),
  week_begins: String(c?.week_begins ?? 1),
  locale: c?.locale ?? '',
  organizer_name: c?.organizer_name ?? '',
  organizer_email: c?.organizer_email ?? '',
  default_email_reminders: c?.default_email_reminders ?? [],
});

const orNull = (s: string) => (s.trim() === '' ? null : s.trim());

function bodyOf(f: Form): CalendarInput {
  return {
    name: f.name,
    internal_name: orNull(f.internal_name),
    description: orNull(f.description),
    timezone: f.timezone,
    week_begins: Number(f.week_begins),
    locale: orNull(f.locale) as CalendarInput['locale'],
    organizer_name: orNull(f.organizer_name),
    organizer_email: orNull(f.organizer_email),
    default_email_reminders: f.default_email_reminders,
  };
}

/** Create a calendar, or edit one: name, zone, week start, language of its pages, who invitations come from. */
export function CalendarEditScreen({ cal }: { cal?: string }) {
  const existing = useLoad(() => (cal ? call(api.GET('/api/calendars/{cal}', { params: { path: { cal } } })).then((r) => r.data) : Promise.resolve(null)), [cal]);
  const [form, setForm] = useState<Form>(formOf(null));
  const [saved, setSaved] = useState(false);
  const save = useAction();
  const remove = useAction();
  useEffect(() => {
    if (existing.data) setForm(formOf(existing.data));
  }, [existing.data]);
  const set = (key: Exclude<keyof Form, 'default_email_reminders'>) => (value: string) => setForm({ ...form, [key]: value });
  const f = save.fieldError;

  const submit = (e: Event) => {
    e.preventDefault();
    setSaved(false);
    void save.run(async () => {
      if (cal) {
        await call(api.PUT('/api/calendars/{cal}', { params: { path: { cal } }, body: bodyOf(form) }));
        setSaved(true);
        existing.reload();
      } else {
        const created = await call(api.POST('/api/calendars', { body: bodyOf(form) }));
        navigate(`${BASE}/calendars/${created.data.public_id}`);
      }
    });
  };
  if (cal && existing.loading && !existing.data) return <Loading />;
  if (cal && existing.error) return <ErrorMessage error={existing.error} />;
  const shown = ['name', 'internal_name', 'description', 'timezone', 'week_begins', 'locale', 'organizer_name', 'organizer_email', 'default_email_reminders'];
  return (
    <Page title={cal ? `Calendar: ${existing.data?.name ?? ''}` : 'New calendar'}>
      {saved ? <Notice>Saved.</Notice> : null}
      <form class="card form" onSubmit={submit} noValidate>
        <ErrorMessage error={save.error} shownFields={shown} />
        <TextField label="Name" required maxLength={255} value={form.name} onValue={set('name')} error={f('name')} />
        <TextField label="Internal name" hint="Only your team sees it." maxLength={255} value={form.internal_name} onValue={set('internal_name')} error={f('internal_name')} />
        <TextArea label="Description" value={form.description} onValue={set('description')} error={f('description')} rows={3} />
        <div class="row">
          <TimeZoneSelect value={form.timezone} onValue={set('timezone')} error={f('timezone')} />
          <Select label="Week starts on" value={form.week_begins} onValue={set('week_begins')} options={WEEKDAYS} error={f('week_begins')} />
          <Select label="Language of its pages and emails" value={form.locale} onValue={set('locale')} options={LOCALES} error={f('locale')} />
        </div>
        <fieldset>
          <legend>Organizer of invitations</legend>
          <p class="hint">Whom invitations come from and answers go to. Empty: the team’s owner.</p>
          <div class="row">
            <TextField label="Organizer name" autoComplete="off" value={form.organizer_name} onValue={set('organizer_name')} error={f('organizer_name')} />
            <TextField label="Organizer email" type="email" autoComplete="off" value={form.organizer_email} onValue={set('organizer_email')} error={f('organizer_email')} />
          </div>
        </fieldset>
        <ReminderChoice
          legend="Email reminders of new events"
          hint="What a new event of this calendar starts with; each event can change its own."
          value={form.default_email_reminders}
          onValue={(default_email_reminders) => setForm({ ...form, default_email_reminders })}
          error={f('default_email_reminders')}
        />
        <div class="form-actions">
          <button type="submit" disabled={save.busy}>
            {save.busy ? 'Saving…' : cal ? 'Save' : 'Create calendar'}
          </button>
          <Link href={`${BASE}/calendars`} class="button secondary">
            Cancel
          </Link>
        </div>
      </form>
      {cal && existing.data ? (
        <section class="card" aria-labelledby="cal-more">
          <h2 id="cal-more">Links</h2>
          <CopyValue label="Public page" value={existing.data.public_url} />
          <CopyValue label="Feed (.ics)" value={`${existing.data.public_url}.ics`} />
          <p>
            <a href={existing.data.public_url} target="_blank" rel="noopener noreferrer">
              Open the public page
            </a>{' '}
            · <Link href={`${BASE}/subscribers?calendar=${cal}`}>Subscribers</Link> · <Link href={`${BASE}/events?calendar=${cal}&range=all`}>Events</Link>
          </p>
          <h2>Delete</h2>
          <ErrorMessage error={remove.error} />
          <p class="muted">A calendar with events cannot be deleted: delete its events first.</p>
          <ConfirmButton
            label="Delete calendar"
            question={`Delete ${existing.data.name}?`}
            busy={remove.busy}
            onConfirm={() =>
              void remove.run(async () => {
                await call(api.DELETE('/api/calendars/{cal}', { params: { path: { cal } } }));
                navigate(`${BASE}/calendars`);
              })
            }
          />
        </section>
      ) : null}
    </Page>
  );
}
