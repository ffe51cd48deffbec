import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, call } from '../api/client';
import type { EventFull, EventInput, Extraction } from '../api/types';
import { BASE, Link, navigate, useLocation } from '../router';
import { DAY_NAMES, describe, type Freq, parseRule, type Recurrence, toRule, WEEKDAYS, type Weekday } from '../rrule';
import { browserZone, TimeZoneSelect } from '../zones';
import { Checkbox, ErrorMessage, Field, Loading, Notice, Page, Select, TextArea, TextField, useAction, useLoad } from '../ui';
import { listCalendars } from './Calendars';
import { ReminderChoice } from '../reminders';

interface Form {
  calendar: string;
  title: string;
  description: string;
  location: string;
  is_all_day: boolean;
  /** YYYY-MM-DDTHH:mm, or YYYY-MM-DD for an all-day event. */
  start: string;
  end: string;
  timezone: string;
  repeats: '' | Freq | 'custom';
  recurrence: Recurrence;
  custom_rule: string;
  access_code: string;
  remove_access_code: boolean;
  has_rsvp: boolean;
  rsvp_limit: string;
  is_draft: boolean;
  send_invite_updates: boolean;
  /** Minutes before each occurrence. */
  email_reminders: number[];
}

const pad = (n: number) => String(n).padStart(2, '0');
const localDate = (d: Date) => `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
const localDateTime = (d: Date) => `${localDate(d)}T${pad(d.getHours())}:${pad(d.getMinutes())}`;

/** Tomorrow at 10:00 for an hour. */
function defaultTimes(): [string, string] {
  const start = new Date();
  start.setDate(start.getDate() + 1);
  start.setHours(10, 0, 0, 0);
  return [localDateTime(start), localDateTime(new Date(start.getTime() + 3600_000))];
}

const DEFAULT_RECURRENCE: Recurrence = { freq: 'WEEKLY', interval: 1, byday: [], end: 'never', count: 10, until: '' };

/** The API's date (wall time with the zone's offset, or an all-day date at midnight UTC) as the form's. */
const formTime = (value: string, allDay: boolean) => (allDay ? value.slice(0, 10) : value.slice(0, 16));

function recurrenceFields(rule: string | null | undefined): Pick<Form, 'repeats' | 'recurrence' | 'custom_rule'> {
  if (!rule) return { repeats: '', recurrence: DEFAULT_RECURRENCE, custom_rule: '' };
  const parsed = parseRule(rule);
  return parsed ? { repeats: parsed.freq, recurrence: parsed, custom_rule: rule } : { repeats: 'custom', recurrence: DEFAULT_RECURRENCE, custom_rule: rule };
}

function formOf(e: EventFull['data'] | null, calendar: string, zone: string, calendarReminders: number[] = []): Form {
  const [start, end] = defaultTimes();
  return {
    calendar: e?.calendar.public_id ?? calendar,
    title: e?.title ?? '',
    description: e?.description ? htmlToText(e.description) : '',
    location: e?.location ?? '',
    is_all_day: e?.is_all_day ?? false,
    start: e ? formTime(e.date_start, e.is_all_day) : start,
    end: e ? formTime(e.date_end, e.is_all_day) : end,
    timezone: e?.timezone ?? e?.calendar.timezone ?? zone,
    ...recurrenceFields(e?.recurrence_rule),
    access_code: '',
    remove_access_code: false,
    has_rsvp: e?.has_rsvp ?? false,
    rsvp_limit: e?.rsvp_limit ? String(e.rsvp_limit) : '',
    is_draft: e?.is_draft ?? false,
    send_invite_updates: true,
    email_reminders: e?.email_reminders ?? calendarReminders,
  };
}

/** The stored (sanitized) description's text, for editing: paragraphs and line breaks kept. */
function htmlToText(html: string): string {
  const doc = new DOMParser().parseFromString(html.replace(/<\/p>\s*<p>/g, '</p>\n\n<p>').replace(/<br\s*\/?>/g, '\n'), 'text/html');
  return doc.body.textContent ?? '';
}

function ruleOf(f: Form): string | null {
  if (f.repeats === '') return null;
  if (f.repeats === 'custom') return f.custom_rule.trim() || null;
  return toRule({ ...f.recurrence, freq: f.repeats });
}

const apiTime = (value: string) => value.replace('T', ' ');

function bodyOf(f: Form, editing: boolean): EventInput & { send_invite_updates?: boolean } {
  const body: EventInput & { send_invite_updates?: boolean } = {
    title: f.title,
    description: f.description.trim() || null,
    location: f.location.trim() || null,
    is_all_day: f.is_all_day,
    date_start: apiTime(f.start),
    date_end: apiTime(f.end),
    timezone: f.timezone,
    recurrence_rule: ruleOf(f),
    has_rsvp: f.has_rsvp,
    rsvp_limit: f.has_rsvp && f.rsvp_limit.trim() ? Number(f.rsvp_limit) : null,
    is_draft: f.is_draft,
    email_reminders: f.email_reminders,
  };
  if (f.remove_access_code) body.access_code = null;
  else if (f.access_code) body.access_code = f.access_code;
  if (editing) body.send_invite_updates = f.send_invite_updates;
  return body;
}

/** Create an event, or edit one. */
export function EventEditScreen({ cal, evt }: { cal?: string; evt?: string }) {
  const { query } = useLocation();
  const calendars = useLoad(listCalendars, []);
  const existing = useLoad(() => (cal && evt ? call(api.GET('/api/calendars/{cal}/events/{evt}', { params: { path: { cal, evt } } })) : Promise.resolve(null)), [cal, evt]);
  const [form, setForm] = useState<Form | null>(null);
  const save = useAction();

  useEffect(() => {
    if (cal && existing.data) setForm(formOf(existing.data.data, cal, browserZone()));
    else if (!cal && calendars.data && !form) {
      const chosen = calendars.data.find((c) => c.public_id === query.get('calendar')) ?? calendars.data[0];
      setForm(formOf(null, chosen?.public_id ?? '', chosen?.timezone ?? browserZone(), chosen?.default_email_reminders));
    }
  }, [existing.data, calendars.data]);

  if ((cal && existing.loading) || calendars.loading || !form) {
    return (
      <>
        <ErrorMessage error={existing.error ?? calendars.error} />
        <Loading />
      </>
    );
  }
  if (!cal && calendars.data?.length === 0) {
    return (
      <Page title="New event">
        <p>
          Events live in a calendar. <Link href={`${BASE}/calendars/new`}>Create a calendar</Link> first.
        </p>
      </Page>
    );
  }
  const submit = (e: Event) => {
    e.preventDefault();
    void save.run(async () => {
      if (cal && evt) {
        await call(api.PUT('/api/calendars/{cal}/events/{evt}', { params: { path: { cal, evt } }, body: bodyOf(form, true) }));
        navigate(`${BASE}/events/${cal}/${evt}`);
      } else {
        const created = await call(api.POST('/api/calendars/{cal}/events', { params: { path: { cal: form.calendar } }, body: bodyOf(form, false) }));
        navigate(`${BASE}/events/${form.calendar}/${created.data.public_id}`);
      }
    });
  };
  const title = cal ? `Edit: ${existing.data?.data.title ?? ''}` : 'New event';
  return (
    <Page title={title}>
      {!cal ? <PasteText form={form} setForm={setForm} /> : null}
      <EventFields onSubmit={submit} form={form} setForm={setForm} editing={Boolean(cal)} existing={existing.data?.data ?? null} calendars={calendars.data ?? []} error={save.error} fieldError={save.fieldError} />
      <div class="form-actions sticky">
        <button type="submit" form="event-form" disabled={save.busy}>
          {save.busy ? 'Saving…' : cal ? 'Save changes' : 'Create event'}
        </button>
        <Link class="button secondary" href={cal && evt ? `${BASE}/events/${cal}/${evt}` : `${BASE}/events`}>
          Cancel
        </Link>
      </div>
    </Page>
  );
}

const SHOWN_FIELDS = ['title', 'description', 'location', 'is_all_day', 'date_start', 'date_end', 'timezone', 'recurrence_rule', 'access_code', 'has_rsvp', 'rsvp_limit', 'is_draft', 'email_reminders'];

function EventFields({
  onSubmit,
  form,
  setForm,
  editing,
  existing,
  calendars,
  error,
  fieldError,
}: {
  onSubmit: (e: Event) => void;
  form: Form;
  setForm: (f: Form) => void;
  editing: boolean;
  existing: EventFull['data'] | null;
  calendars: Array<{ public_id: string; name: string; timezone: string; default_email_reminders: number[] }>;
  error: ApiError | null;
  fieldError: (name: string) => string | undefined;
}) {
  const set = <K extends keyof Form>(key: K) => (value: Form[K]) => setForm({ ...form, [key]: value });
  const setAllDay = (allDay: boolean) =>
    setForm({ ...form, is_all_day: allDay, start: allDay ? form.start.slice(0, 10) : `${form.start.slice(0, 10)}T10:00`, end: allDay ? form.end.slice(0, 10) : `${form.end.slice(0, 10)}T11:00` });
  const setStart = (start: string) => {
    // Moving the start keeps the end after it.
    const end = form.end <= start ? (form.is_all_day ? start : localDateTime(new Date(new Date(start).getTime() + 3600_000))) : form.end;
    setForm({ ...form, start, end });
  };
  const setRecurrence = (patch: Partial<Recurrence>) => setForm({ ...form, recurrence: { ...form.recurrence, ...patch } });
  const rule = ruleOf(form);
  const f = fieldError;
  return (
    <form id="event-form" class="card form" onSubmit={onSubmit} noValidate>
      <ErrorMessage error={error} shownFields={SHOWN_FIELDS} />
      {!editing ? (
        <Select
          label="Calendar"
          value={form.calendar}
          onValue={(value) => {
            // Another calendar: its zone and its default reminders, as the API would give them.
            const chosen = calendars.find((c) => c.public_id === value);
            setForm({ ...form, calendar: value, timezone: chosen?.timezone ?? form.timezone, email_reminders: chosen?.default_email_reminders ?? form.email_reminders });
          }}
          options={calendars.map((c): [string, string] => [c.public_id, c.name])}
        />
      ) : (
        <p class="muted">Calendar: {existing?.calendar.name}</p>
      )}
      <TextField label="Title" required maxLength={255} value={form.title} onValue={set('title')} error={f('title')} />
      <TextArea label="Description" value={form.description} onValue={set('description')} error={f('description')} rows={4} />
      <TextField label="Location" value={form.location} onValue={set('location')} error={f('location')} />
      <fieldset>
        <legend>When</legend>
        <Checkbox label="All day" checked={form.is_all_day} onChecked={setAllDay} error={f('is_all_day')} />
        <div class="row">
          <TextField label={form.is_all_day ? 'First day' : 'Starts'} type={form.is_all_day ? 'date' : 'datetime-local'} required value={form.start} onValue={setStart} error={f('date_start')} />
          <TextField label={form.is_all_day ? 'Last day' : 'Ends'} type={form.is_all_day ? 'date' : 'datetime-local'} required value={form.end} onValue={set('end')} error={f('date_end')} />
        </div>
        <TimeZoneSelect value={form.timezone} onValue={set('timezone')} error={f('timezone')} hint={form.is_all_day ? 'An all-day event is the same dates everywhere.' : 'The times above are wall-clock times in this zone.'} />
      </fieldset>
      <fieldset>
        <legend>Recurrence</legend>
        <Select<Form['repeats']>
          label="Repeats"
          value={form.repeats}
          onValue={(repeats) => setForm({ ...form, repeats })}
          options={[
            ['', 'Does not repeat'],
            ['DAILY', 'Daily'],
            ['WEEKLY', 'Weekly'],
            ['MONTHLY', 'Monthly'],
            ['YEARLY', 'Yearly'],
            ['custom', 'Custom rule (RRULE)'],
          ]}
          error={f('recurrence_rule')}
        />
        {form.repeats !== '' && form.repeats !== 'custom' ? (
          <>
            <TextField label={`Every how many ${{ DAILY: 'days', WEEKLY: 'weeks', MONTHLY: 'months', YEARLY: 'years' }[form.repeats]}`} type="number" min={1} max={999} value={String(form.recurrence.interval)} onValue={(v) => setRecurrence({ interval: Math.max(1, Number(v) || 1) })} />
            {form.repeats === 'WEEKLY' ? (
              <fieldset class="weekdays">
                <legend>On</legend>
                {WEEKDAYS.map((d: Weekday) => (
                  <Checkbox
                    key={d}
                    label={DAY_NAMES[d]}
                    checked={form.recurrence.byday.includes(d)}
                    onChecked={(on) => setRecurrence({ byday: on ? [...form.recurrence.byday, d] : form.recurrence.byday.filter((x) => x !== d) })}
                  />
                ))}
              </fieldset>
            ) : null}
            <div class="row">
              <Select<Recurrence['end']>
                label="Stops"
                value={form.recurrence.end}
                onValue={(end) => setRecurrence({ end })}
                options={[
                  ['never', 'Never'],
                  ['count', 'After a number of times'],
                  ['until', 'On a date'],
                ]}
              />
              {form.recurrence.end === 'count' ? <TextField label="Times" type="number" min={1} max={1000} value={String(form.recurrence.count)} onValue={(v) => setRecurrence({ count: Math.max(1, Number(v) || 1) })} /> : null}
              {form.recurrence.end === 'until' ? <TextField label="Last date" type="date" value={form.recurrence.until} onValue={(until) => setRecurrence({ until })} /> : null}
            </div>
          </>
        ) : null}
        {form.repeats === 'custom' ? <TextField label="RRULE" hint="RFC 5545, e.g. FREQ=MONTHLY;BYDAY=1MO" class="mono" value={form.custom_rule} onValue={set('custom_rule')} /> : null}
        {rule ? (
          <p class="rule" aria-live="polite">
            {form.repeats !== 'custom' ? <strong>{describe({ ...form.recurrence, freq: form.repeats as Freq })}</strong> : null} <code>{rule}</code>
          </p>
        ) : null}
      </fieldset>
      <fieldset>
        <legend>RSVPs and access</legend>
        <Checkbox label="Take RSVPs on the event page" checked={form.has_rsvp} onChecked={set('has_rsvp')} error={f('has_rsvp')} />
        {form.has_rsvp ? <TextField label="Places" type="number" min={1} hint="Yes answers taken at most; empty for no limit." value={form.rsvp_limit} onValue={set('rsvp_limit')} error={f('rsvp_limit')} /> : null}
        {existing?.is_protected && !form.remove_access_code ? <p class="muted">The event’s pages are protected by an access code.</p> : null}
        <TextField
          label={existing?.is_protected ? 'New access code' : 'Access code'}
          autoComplete="off"
          hint={existing?.is_protected ? 'Leave empty to keep the current code.' : 'Visitors must type it to see the event’s pages. Empty: open to all.'}
          value={form.access_code}
          onValue={set('access_code')}
          error={f('access_code')}
          disabled={form.remove_access_code}
        />
        {existing?.is_protected ? <Checkbox label="Remove the access code" checked={form.remove_access_code} onChecked={set('remove_access_code')} /> : null}
        <Checkbox label="Draft (not published)" checked={form.is_draft} onChecked={set('is_draft')} error={f('is_draft')} />
        {editing && existing?.has_calendar_invites ? <Checkbox label="Email invitees the update" checked={form.send_invite_updates} onChecked={set('send_invite_updates')} /> : null}
      </fieldset>
      <ReminderChoice
        legend="Email reminders"
        hint="Sent before each occurrence to invitees who have not declined and to everyone who answered yes or maybe."
        value={form.email_reminders}
        onValue={set('email_reminders')}
        error={f('email_reminders')}
      />
    </form>
  );
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Free text read into the form's fields by the extraction API (it waits up to 10 s for the answer, then this asks again). */
function PasteText({ form, setForm }: { form: Form; setForm: (f: Form) => void }) {
  const [text, setText] = useState('');
  const [filled, setFilled] = useState(false);
  const { busy, error, run, setError } = useAction();
  const read = () =>
    void run(async () => {
      setFilled(false);
      const first = await call(api.POST('/api/events/extract', { params: { query: { wait: 10 } }, body: { text, timezone: form.timezone } }));
      let extraction = first.data as Extraction;
      for (let i = 0; extraction.status === 'pending' && i < 10; i++) {
        await sleep(2000);
        extraction = (await call(api.GET('/api/events/extract/{ext}', { params: { path: { ext: extraction.id } } }))).data;
      }
      if (extraction.status === 'pending') throw new ApiError(0, 'The text is still being read. Try again in a moment.');
      if (extraction.status === 'failed' || !extraction.result) {
        setError(new ApiError(422, extraction.error === 'unsupported_language' ? 'Only English text can be read.' : (extraction.error ?? 'The text could not be read.')));
        return;
      }
      const r = extraction.result;
      setForm({
        ...form,
        title: r.title ?? form.title,
        description: r.description ?? form.description,
        location: r.location ?? form.location,
        is_all_day: r.is_all_day,
        start: formTime(r.date_start, r.is_all_day),
        end: formTime(r.date_end, r.is_all_day),
        timezone: r.timezone || form.timezone,
        ...(r.recurrence_rule ? recurrenceFields(r.recurrence_rule) : {}),
      });
      setFilled(true);
    });
  return (
    <details class="card paste">
      <summary>Fill the form from text</summary>
      <Field label="Text of the event" hint="A sentence, an email, an invitation, in English.">
        {(a11y) => <textarea {...a11y} rows={4} value={text} onInput={(e) => setText(e.currentTarget.value)} maxLength={8000} />}
      </Field>
      <ErrorMessage error={error} />
      {filled ? <Notice>The form is filled from the text: check it, then create the event.</Notice> : null}
      <button type="button" class="secondary" disabled={busy || text.trim().length < 10} onClick={read}>
        {busy ? 'Reading…' : 'Read the text'}
      </button>
    </details>
  );
}
