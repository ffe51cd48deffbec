import { extractWithRules } from '../../services/extraction-worker/extractor/rules-extractor';
import { ExtractionFailure, type ExtractionResult } from '../../services/extraction-worker/extractor/extractor';
import { rewrittenParsers } from '../../services/extraction-worker/extractor/chrono-reader';
import { cpuMsOf } from '../helpers/cpu';

/**
 * The rule-based extractor on cases written for these tests (the accuracy corpus is the
 * benchmark's, not the tests'). Reference moments are fixed so every answer is exact.
 */
const NY_WINTER = '2026-03-05T10:00:00-05:00'; // a Thursday, three days before US DST starts
const NY_AUTUMN = '2026-10-28T10:00:00-04:00'; // a Wednesday, four days before US DST ends
const NY_NOVEMBER = '2026-11-21T10:00:00-05:00'; // a Saturday
const NY_DECEMBER = '2026-12-01T10:00:00-05:00';
const LONDON = '2026-03-25T10:00:00+00:00'; // a Wednesday, four days before BST starts

const read = (text: string, timezone: string, reference: string): ExtractionResult =>
  extractWithRules({ text, timezone, referenceDate: new Date(reference) });

const timesOf = (r: ExtractionResult) => ({ start: r.date_start, end: r.date_end, zone: r.timezone, allDay: r.is_all_day });

describe('DST: wall-clock times keep their clock time on the actual date', () => {
  it.each([
    ['Planning session Monday March 9 at 10am', 'America/New_York', NY_WINTER, '2026-03-09T10:00:00-04:00', '2026-03-09T11:00:00-04:00'],
    ['Dentist Nov 3 at 9am', 'America/New_York', NY_AUTUMN, '2026-11-03T09:00:00-05:00', '2026-11-03T10:00:00-05:00'],
    ['Retro Monday 30 March 14:00', 'Europe/London', LONDON, '2026-03-30T14:00:00+01:00', '2026-03-30T15:00:00+01:00'],
    ['Brunch on Sunday 29 March at 11:00', 'Europe/Berlin', '2026-03-25T10:00:00+01:00', '2026-03-29T11:00:00+02:00', '2026-03-29T12:00:00+02:00'],
    ['Same week check-in tomorrow at 3pm', 'America/New_York', NY_WINTER, '2026-03-06T15:00:00-05:00', '2026-03-06T16:00:00-05:00'],
  ])('%s (%s)', (text, zone, ref, start, end) => {
    expect(timesOf(read(text, zone, ref))).toEqual({ start, end, zone, allDay: false });
  });

  it('an event across the change ends at the right instant', () => {
    expect(timesOf(read('Party Saturday 10pm-2am', 'America/New_York', NY_AUTUMN))).toEqual({
      start: '2026-10-31T22:00:00-04:00',
      end: '2026-11-01T02:00:00-05:00',
      zone: 'America/New_York',
      allDay: false,
    });
    // A duration is elapsed time: 11pm EDT + 4 hours is 2am EST (the clock went back once).
    expect(read('Overnight deploy Saturday 11pm for 4 hours', 'America/New_York', NY_AUTUMN)).toMatchObject({
      date_start: '2026-10-31T23:00:00-04:00',
      date_end: '2026-11-01T02:00:00-05:00',
    });
  });
});

describe('a zone written in the text wins, mapped to an IANA zone for that date', () => {
  it.each([
    ['Vendor call Thursday March 19 at 9am PT', 'America/New_York', NY_WINTER, '2026-03-19T09:00:00-07:00', 'America/Los_Angeles'],
    // London is still on GMT on 12 March, New York already on EDT.
    ['All-hands 4pm ET on March 12', 'Europe/London', '2026-03-05T10:00:00Z', '2026-03-12T16:00:00-04:00', 'America/New_York'],
    // "CET" in July is the Central European clock, then on summer time; the writer's own zone is kept.
    ['Sync July 7 14:00 CET', 'Europe/Berlin', LONDON, '2026-07-07T14:00:00+02:00', 'Europe/Berlin'],
    ['Release at 17:00 UTC on April 2', 'America/New_York', NY_WINTER, '2026-04-02T17:00:00+00:00', 'UTC'],
    ['Standup 9:00 GMT+2 on March 12', 'America/New_York', NY_WINTER, '2026-03-12T09:00:00+02:00', 'Etc/GMT-2'],
    ['Town hall 5pm London time Friday', 'America/New_York', NY_WINTER, '2026-03-06T17:00:00+00:00', 'Europe/London'],
    ['Launch review 10am (PST) March 24', 'Asia/Tokyo', '2026-03-05T10:00:00+09:00', '2026-03-24T10:00:00-07:00', 'America/Los_Angeles'],
  ])('%s', (text, zone, ref, start, eventZone) => {
    const r = read(text, zone, ref);
    expect(r.date_start).toBe(start);
    expect(r.timezone).toBe(eventZone);
  });

  it("reads Outlook's zone labels by their name, not their standard offset", () => {
    const outlook = 'Subject: Q2 planning\nWhen: Tuesday, March 10, 2026 1:00 PM-2:00 PM. (UTC-05:00) Eastern Time (US & Canada)\nWhere: Conference Room 3';
    expect(read(outlook, 'Europe/London', '2026-03-05T10:00:00Z')).toMatchObject({
      title: 'Q2 planning',
      location: 'Conference Room 3',
      date_start: '2026-03-10T13:00:00-04:00',
      date_end: '2026-03-10T14:00:00-04:00',
      timezone: 'America/New_York',
    });
    const cities = 'When: Friday, March 20, 2026 9:00 AM-10:00 AM (UTC+01:00) Amsterdam, Berlin, Bern, Rome, Stockholm, Vienna\nSubject: Partner sync';
    expect(read(cities, 'America/New_York', NY_WINTER)).toMatchObject({ date_start: '2026-03-20T09:00:00+01:00', timezone: 'Europe/Amsterdam' });
  });

  it('reads an IANA zone name written in the text (Google Calendar invitations)', () => {
    const google = 'Design review\nTuesday, March 10 · 1:00 – 2:00pm\nTime zone: America/New_York\nVideo call link: https://meet.google.com/abc-defg-hij';
    expect(read(google, 'America/Chicago', NY_WINTER)).toMatchObject({
      title: 'Design review',
      location: 'https://meet.google.com/abc-defg-hij',
      date_start: '2026-03-10T13:00:00-04:00',
      date_end: '2026-03-10T14:00:00-04:00',
      timezone: 'America/New_York',
    });
  });

  it('does not take a state code after a city for a zone', () => {
    expect(read('Dinner in Hartford, CT tomorrow at 7pm', 'America/New_York', NY_WINTER)).toMatchObject({
      date_start: '2026-03-06T19:00:00-05:00',
      timezone: 'America/New_York',
      location: 'Hartford',
    });
  });
});

describe('ranges, durations and defaults', () => {
  it.each([
    ['Office hours tomorrow 9:30-10:15am', '2026-03-06T09:30:00-05:00', '2026-03-06T10:15:00-05:00'],
    ['Workshop on Friday from 2 to 4pm', '2026-03-06T14:00:00-05:00', '2026-03-06T16:00:00-05:00'],
    ['Focus time tomorrow 14:00\u201315:30', '2026-03-06T14:00:00-05:00', '2026-03-06T15:30:00-05:00'],
    ['Call with the bank tomorrow at 11 for 90 minutes', '2026-03-06T11:00:00-05:00', '2026-03-06T12:30:00-05:00'],
    ['Haircut tomorrow 4pm, 45 mins', '2026-03-06T16:00:00-05:00', '2026-03-06T16:45:00-05:00'],
    ['Screening call March 18 at 10:00 AM (30 minutes)', '2026-03-18T10:00:00-04:00', '2026-03-18T10:30:00-04:00'],
    ['Pairing tomorrow at 1pm for 1h', '2026-03-06T13:00:00-05:00', '2026-03-06T14:00:00-05:00'],
    ['Quick call 1h30 tomorrow at 2pm', '2026-03-06T14:00:00-05:00', '2026-03-06T15:30:00-05:00'],
    ['Design review tomorrow at 2pm for an hour and a half', '2026-03-06T14:00:00-05:00', '2026-03-06T15:30:00-05:00'],
    ['A 20-minute check-in on Friday at 11', '2026-03-06T11:00:00-05:00', '2026-03-06T11:20:00-05:00'],
    ['Standup in 2 hours', '2026-03-05T12:00:00-05:00', '2026-03-05T13:00:00-05:00'],
    ['Dentist on March 12 at 8am', '2026-03-12T08:00:00-04:00', '2026-03-12T09:00:00-04:00'],
    // A bare hour from 1 to 6 is an afternoon one; today when still ahead.
    ['Drinks with Jo at 5:30', '2026-03-05T17:30:00-05:00', '2026-03-05T18:30:00-05:00'],
    ['Workshop from 2 to 4', '2026-03-05T14:00:00-05:00', '2026-03-05T16:00:00-05:00'],
    ['Early run tomorrow at 06:00', '2026-03-06T06:00:00-05:00', '2026-03-06T07:00:00-05:00'],
    ['Team dinner on the 15th at 7pm', '2026-03-15T19:00:00-04:00', '2026-03-15T20:00:00-04:00'],
    ['Webinar: Intro to Kubernetes | Thursday, April 9 | 1:00 PM', '2026-04-09T13:00:00-04:00', '2026-04-09T14:00:00-04:00'],
  ])('%s', (text, start, end) => {
    expect(read(text, 'America/New_York', NY_WINTER)).toMatchObject({ date_start: start, date_end: end, is_all_day: false });
  });

  it('crosses midnight and the year end', () => {
    expect(read("New Year's Eve party Dec 31 9pm to Jan 1 1am", 'America/New_York', NY_DECEMBER)).toMatchObject({
      title: "New Year's Eve party",
      date_start: '2026-12-31T21:00:00-05:00',
      date_end: '2027-01-01T01:00:00-05:00',
    });
    expect(read('Late shift Friday 11pm to 3am', 'America/New_York', NY_WINTER)).toMatchObject({
      date_start: '2026-03-06T23:00:00-05:00',
      date_end: '2026-03-07T03:00:00-05:00',
    });
  });

  it.each([
    ['Family trip Dec 28 - Jan 3', NY_DECEMBER, '2026-12-28', '2027-01-03'],
    ['Offsite Monday through Wednesday', NY_WINTER, '2026-03-09', '2026-03-11'],
    ['Hackathon June 3 for 3 days', NY_WINTER, '2026-06-03', '2026-06-05'],
    ['Company holiday on July 3', NY_WINTER, '2026-07-03', '2026-07-03'],
    ['Board meeting on 2026-03-20 all day', NY_WINTER, '2026-03-20', '2026-03-20'],
    ['Museum trip in 3 days', NY_WINTER, '2026-03-08', '2026-03-08'],
  ])('all day: %s (inclusive last day)', (text, ref, start, end) => {
    expect(read(text, 'America/New_York', ref)).toMatchObject({ is_all_day: true, date_start: start, date_end: end, timezone: 'America/New_York' });
  });
});

describe('numeric dates follow the habit of the zone', () => {
  it.each([
    ['Europe/London', 'Dentist 03/04/2026 at 9:15', '2026-04-03T09:15:00+01:00'],
    ['America/New_York', 'Dentist 03/04/2026 at 9:15', '2026-03-04T09:15:00-05:00'],
    ['Europe/Paris', 'Board meeting 12/05 at 10:00', '2026-05-12T10:00:00+02:00'],
    ['Australia/Sydney', 'Handover 1/4 at 9am', '2026-04-01T09:00:00+11:00'],
    ['Europe/Berlin', 'Dentist appointment 14.03. at 9', '2026-03-14T09:00:00+01:00'],
    ['America/New_York', 'Conference 12.05.2026 at 10am', '2026-05-12T10:00:00-04:00'],
    ['America/Chicago', 'Handover 1/4 at 9am', '2027-01-04T09:00:00-06:00'],
  ])('%s: %s', (zone, text, start) => {
    expect(read(text, zone, '2026-03-05T00:00:00Z').date_start).toBe(start);
  });
});

describe('repetition becomes an RRULE, starting on the first matching day', () => {
  it.each([
    ['Pilates every Wednesday at 7am', '2026-03-11T07:00:00-04:00', 'FREQ=WEEKLY;BYDAY=WE'],
    ['Office hours Mondays and Thursdays at 3pm', '2026-03-05T15:00:00-05:00', 'FREQ=WEEKLY;BYDAY=MO,TH'],
    ['Standup every weekday at 9:30am', '2026-03-06T09:30:00-05:00', 'FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR'],
    ['Team sync every other Monday at 10am', '2026-03-09T10:00:00-04:00', 'FREQ=WEEKLY;INTERVAL=2;BYDAY=MO'],
    ['Meds reminder every day at 8pm', '2026-03-05T20:00:00-05:00', 'FREQ=DAILY'],
    ['Book club first Monday of every month at 7pm', '2026-04-06T19:00:00-04:00', 'FREQ=MONTHLY;BYDAY=1MO'],
    ['Rent due on the 1st of every month at 9am', '2026-04-01T09:00:00-04:00', 'FREQ=MONTHLY;BYMONTHDAY=1'],
    ['Bootcamp every Saturday at 8am for 6 weeks', '2026-03-07T08:00:00-05:00', 'FREQ=WEEKLY;BYDAY=SA;COUNT=6'],
    ['Piano lessons every Tuesday at 4pm until May 26', '2026-03-10T16:00:00-04:00', 'FREQ=WEEKLY;BYDAY=TU;UNTIL=20260527T035959Z'],
  ])('%s', (text, start, rule) => {
    const r = read(text, 'America/New_York', NY_WINTER);
    expect(r.date_start).toBe(start);
    expect(r.recurrence_rule).toBe(rule);
  });

  it.each([
    // Through the end of the month, written like "until March 1, 2027" (the day's end, in UTC).
    ['Board meeting first Monday of every month at 6pm until March 2027', 'Board meeting', '2026-12-07T18:00:00-05:00', '2026-12-07T19:00:00-05:00', 'FREQ=MONTHLY;BYDAY=1MO;UNTIL=20270401T035959Z'],
    ['Team call every Monday at 6pm until March 2027', 'Team call', '2026-11-23T18:00:00-05:00', '2026-11-23T19:00:00-05:00', 'FREQ=WEEKLY;BYDAY=MO;UNTIL=20270401T035959Z'],
    ['Team call every Monday at 6pm until the end of March', 'Team call', '2026-11-23T18:00:00-05:00', '2026-11-23T19:00:00-05:00', 'FREQ=WEEKLY;BYDAY=MO;UNTIL=20270401T035959Z'],
    ['Board meeting first Monday of every month at 6pm until March 1, 2027', 'Board meeting', '2026-12-07T18:00:00-05:00', '2026-12-07T19:00:00-05:00', 'FREQ=MONTHLY;BYDAY=1MO;UNTIL=20270302T045959Z'],
  ])('until a month: %s', (text, title, start, end, rule) => {
    expect(read(text, 'America/New_York', NY_NOVEMBER)).toMatchObject({ title, date_start: start, date_end: end, is_all_day: false, recurrence_rule: rule });
  });

  it('reads "until <month>" without a year as the next such month, through its last day', () => {
    // All day: UNTIL is a date.
    expect(read('Team call every Monday until May', 'America/New_York', NY_NOVEMBER)).toMatchObject({
      title: 'Team call',
      date_start: '2026-11-23',
      is_all_day: true,
      recurrence_rule: 'FREQ=WEEKLY;BYDAY=MO;UNTIL=20270531',
    });
    // The month still under way is this one.
    expect(read('Standup every weekday at 9am through November', 'America/New_York', NY_NOVEMBER)).toMatchObject({
      date_start: '2026-11-23T09:00:00-05:00',
      recurrence_rule: 'FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR;UNTIL=20261201T045959Z',
    });
  });

  it('reads every spelling of a day, alone and in lists', () => {
    const spellings: Array<[string, string]> = [
      ['sun', 'SU'], ['suns', 'SU'], ['sunday', 'SU'], ['sundays', 'SU'], ['mon', 'MO'], ['mondays', 'MO'],
      ['tue', 'TU'], ['tues', 'TU'], ['tuesday', 'TU'], ['tuesdays', 'TU'], ['wed', 'WE'], ['weds', 'WE'], ['wednesdays', 'WE'],
      ['thu', 'TH'], ['thur', 'TH'], ['thurs', 'TH'], ['thursday', 'TH'], ['thursdays', 'TH'], ['fri', 'FR'], ['sat', 'SA'], ['saturdays', 'SA'],
    ];
    for (const [word, code] of spellings) expect([word, read(`Yoga every ${word} at 6pm`, 'America/New_York', NY_WINTER).recurrence_rule]).toEqual([word, `FREQ=WEEKLY;BYDAY=${code}`]);
    expect(read('Yoga every Mon/Wed/Fri at 7am', 'America/New_York', NY_WINTER).recurrence_rule).toBe('FREQ=WEEKLY;BYDAY=MO,WE,FR');
    expect(read('Yoga Tuesdays and thurs at 6pm', 'America/New_York', NY_WINTER).recurrence_rule).toBe('FREQ=WEEKLY;BYDAY=TU,TH');
    expect(read('Clinic Mondays, Wednesdays & Fridays at 8am', 'America/New_York', NY_WINTER).recurrence_rule).toBe('FREQ=WEEKLY;BYDAY=MO,WE,FR');
  });

  it('keeps a frequency word that names the event in the title', () => {
    expect(read('Weekly sync tomorrow at 11am', 'America/New_York', NY_WINTER)).toMatchObject({ title: 'Weekly sync', recurrence_rule: null });
    expect(read('Standup daily at 9am', 'America/New_York', NY_WINTER)).toMatchObject({ title: 'Standup', recurrence_rule: 'FREQ=DAILY' });
  });
});

describe('"for n weeks/months": how long a repetition goes on', () => {
  // From Thursday 5 March 2026, 10:00 in New York (US DST starts on the 8th).
  it.each([
    // Every listed day in each week: days × weeks.
    ['Spanish class Tuesdays and Thursdays at 6pm for 6 weeks', 'Spanish class', '2026-03-05T18:00:00-05:00', 'FREQ=WEEKLY;BYDAY=TU,TH;COUNT=12'],
    ['Spanish class Tuesdays and Thursdays at 6pm for two weeks', 'Spanish class', '2026-03-05T18:00:00-05:00', 'FREQ=WEEKLY;BYDAY=TU,TH;COUNT=4'],
    ['Spanish class every Tuesday and Thursday at 6pm for 6 weeks starting March 10', 'Spanish class', '2026-03-10T18:00:00-04:00', 'FREQ=WEEKLY;BYDAY=TU,TH;COUNT=12'],
    ['Yoga every Mon, Wed and Fri at 7am for 3 weeks', 'Yoga', '2026-03-06T07:00:00-05:00', 'FREQ=WEEKLY;BYDAY=MO,WE,FR;COUNT=9'],
    ['Standup every weekday at 9am for 2 weeks', 'Standup', '2026-03-06T09:00:00-05:00', 'FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR;COUNT=10'],
    ['Running club every weekend at 8am for one week', 'Running club', '2026-03-07T08:00:00-05:00', 'FREQ=WEEKLY;BYDAY=SA,SU;COUNT=2'],
    ['Team sync every other Monday at 10am for 6 weeks', 'Team sync', '2026-03-09T10:00:00-04:00', 'FREQ=WEEKLY;INTERVAL=2;BYDAY=MO;COUNT=3'],
    ['Meds every day at 8pm for two weeks', 'Meds', '2026-03-05T20:00:00-05:00', 'FREQ=DAILY;COUNT=14'],
    ['Meds every other day at 8pm for 10 days', 'Meds', '2026-03-05T20:00:00-05:00', 'FREQ=DAILY;INTERVAL=2;COUNT=5'],
    // As before: one day a week, once a month, a number of times.
    ['Bootcamp every Saturday at 8am for 6 weeks', 'Bootcamp', '2026-03-07T08:00:00-05:00', 'FREQ=WEEKLY;BYDAY=SA;COUNT=6'],
    ['Book club first Monday of every month at 7pm for 6 months', 'Book club', '2026-04-06T19:00:00-04:00', 'FREQ=MONTHLY;BYDAY=1MO;COUNT=6'],
    ['Piano lessons every Tuesday at 4pm for 10 lessons', 'Piano lessons', '2026-03-10T16:00:00-04:00', 'FREQ=WEEKLY;BYDAY=TU;COUNT=10'],
    // Months (and days of a weekly rule): until the day before the same date that much later,
    // through its end in the event's zone.
    ['Spanish class Tuesdays and Thursdays at 6pm for 2 months', 'Spanish class', '2026-03-05T18:00:00-05:00', 'FREQ=WEEKLY;BYDAY=TU,TH;UNTIL=20260505T035959Z'],
    ['Choir Mondays and Wednesdays at 7pm for three months', 'Choir', '2026-03-09T19:00:00-04:00', 'FREQ=WEEKLY;BYDAY=MO,WE;UNTIL=20260609T035959Z'],
    ['Yoga every Monday at 6pm for a month', 'Yoga', '2026-03-09T18:00:00-04:00', 'FREQ=WEEKLY;BYDAY=MO;UNTIL=20260409T035959Z'],
    ['Clinic Mondays and Wednesdays at 8am for 10 days', 'Clinic', '2026-03-09T08:00:00-04:00', 'FREQ=WEEKLY;BYDAY=MO,WE;UNTIL=20260319T035959Z'],
  ])('%s', (text, title, start, rule) => {
    expect(read(text, 'America/New_York', NY_WINTER)).toMatchObject({ title, date_start: start, recurrence_rule: rule });
  });

  it('ends an all-day repetition "for 2 months" on a date', () => {
    expect(read('Spanish class Tuesdays and Thursdays for 2 months', 'America/New_York', NY_WINTER)).toMatchObject({
      title: 'Spanish class',
      date_start: '2026-03-05',
      is_all_day: true,
      recurrence_rule: 'FREQ=WEEKLY;BYDAY=TU,TH;UNTIL=20260504',
    });
  });
});

describe('title and location', () => {
  const at = (text: string) => {
    const r = read(text, 'America/New_York', NY_WINTER);
    return { title: r.title, location: r.location };
  };

  it.each([
    ['Reminder: vet appointment tomorrow at 3pm', 'Vet appointment', null],
    ["Don't forget: parents evening on Monday at 6pm in the school hall", 'Parents evening', 'the school hall'],
    ['Please join us for the spring fundraiser on Friday at 7pm at the Grand Hyatt', 'Spring fundraiser', 'the Grand Hyatt'],
    ['Dinner with Marco on Friday at 8 at Carbone', 'Dinner with Marco', 'Carbone'],
    ['Team lunch @ Shake Shack tomorrow noon', 'Team lunch', 'Shake Shack'],
    ['Open house Saturday 1-4pm at 42 Elm Street, Springfield', 'Open house', '42 Elm Street, Springfield'],
    ['Retro tomorrow 4pm in Room 12B', 'Retro', 'Room 12B'],
    ['Kickoff Monday 9am at home', 'Kickoff', 'home'],
    ['Yoga retreat, April 17-19, Big Sur', 'Yoga retreat', 'Big Sur'],
    ['Customer demo tomorrow 2pm https://meet.google.com/abc-defg-hij', 'Customer demo', 'https://meet.google.com/abc-defg-hij'],
    ['Call Sam back at the moment he lands, Friday 6pm', 'Call Sam back at the moment he lands', null],
    ['Lunch and learn: Postgres indexes, Wednesday 12:30', 'Lunch and learn: Postgres indexes', null],
    ['Quarterly business review - March 31 - 9:00 AM to 12:00 PM - Board Room', 'Quarterly business review', 'Board Room'],
  ])('%s', (text, title, location) => {
    expect(at(text)).toEqual({ title, location });
  });

  it('reads places and addresses in any script, and a day written apart from its time', () => {
    expect(read('Meetup 19:00 at Betahaus, Prinzessinnenstraße 19, Berlin on March 18', 'Europe/Berlin', '2026-03-05T10:00:00+01:00')).toMatchObject({
      title: 'Meetup',
      location: 'Betahaus, Prinzessinnenstraße 19, Berlin',
      date_start: '2026-03-18T19:00:00+01:00',
    });
    expect(read('Brunch at Café Einstein tomorrow 11:00', 'Europe/Berlin', '2026-03-05T10:00:00+01:00')).toMatchObject({ title: 'Brunch', location: 'Café Einstein' });
    expect(read('Team dinner March 18, starts at 7pm', 'America/New_York', NY_WINTER)).toMatchObject({ title: 'Team dinner', date_start: '2026-03-18T19:00:00-04:00' });
    // A range of days stays all-day; the time belongs to something else.
    expect(read('Conference April 14-16. Doors open at 9am.', 'America/New_York', NY_WINTER)).toMatchObject({
      title: 'Conference',
      is_all_day: true,
      date_start: '2026-04-14',
      date_end: '2026-04-16',
    });
  });

  it("takes an email's Subject and Where lines, and ignores the sender's date", () => {
    const email = [
      'From: Alice Example <alice@example.com>',
      'Sent: Monday, March 2, 2026 9:14 AM',
      'To: Bob',
      'Subject: RE: Invitation: Design review @ Tue Mar 10, 2026 1pm - 2pm (EDT) (bob@example.com)',
      'When: Tuesday, March 10, 2026 1:00 PM-2:00 PM',
      'Where: Blue room, 3rd floor',
      '',
      'Bring the mockups.',
    ].join('\n');
    expect(read(email, 'America/New_York', NY_WINTER)).toEqual({
      title: 'Design review',
      description: 'Bring the mockups.',
      location: 'Blue room, 3rd floor',
      date_start: '2026-03-10T13:00:00-04:00',
      date_end: '2026-03-10T14:00:00-04:00',
      timezone: 'America/New_York',
      is_all_day: false,
      recurrence_rule: null,
    });
  });

  it('skips greetings and meeting-link boilerplate when looking for the title', () => {
    const text = 'Hi team,\nJoin Zoom Meeting\nhttps://us02web.zoom.us/j/85512345678\nBudget review tomorrow 11am';
    expect(read(text, 'America/New_York', NY_WINTER)).toMatchObject({
      title: 'Budget review',
      location: 'https://us02web.zoom.us/j/85512345678',
      date_start: '2026-03-06T11:00:00-05:00',
    });
  });

  it('keeps the rest of a long text as the description', () => {
    expect(read('Dentist on March 12 at 3pm. Bring the insurance card.', 'America/New_York', NY_WINTER)).toMatchObject({
      title: 'Dentist',
      description: 'Bring the insurance card.',
    });
  });
});

describe('times and days as people write them', () => {
  it.each([
    // One meridiem for the range: the start is before the end on the same day.
    ['Brunch Saturday 11-1pm', '2026-03-07T11:00:00-05:00', '2026-03-07T13:00:00-05:00'],
    ['Workshop Monday 9:30-12pm', '2026-03-09T09:30:00-04:00', '2026-03-09T12:00:00-04:00'],
    ['Lab meeting Wednesday noon-1', '2026-03-11T12:00:00-04:00', '2026-03-11T13:00:00-04:00'],
    ['Site visit Friday 9am-5', '2026-03-06T09:00:00-05:00', '2026-03-06T17:00:00-05:00'],
    ['Demo 12 noon tomorrow', '2026-03-06T12:00:00-05:00', '2026-03-06T13:00:00-05:00'],
    ['Late show Friday 9pm-1', '2026-03-06T21:00:00-05:00', '2026-03-07T01:00:00-05:00'],
    // Chat spellings.
    ['Game night tonite @ 7:30', '2026-03-05T19:30:00-05:00', '2026-03-05T20:30:00-05:00'],
    ['Call Priya tmrw @ 4', '2026-03-06T16:00:00-05:00', '2026-03-06T17:00:00-05:00'],
    // A weekday with its day of the month; a clock time in words.
    ['Piano lesson Tuesday the 17th at 4', '2026-03-17T16:00:00-04:00', '2026-03-17T17:00:00-04:00'],
    ['Dentist at quarter to 9 on Monday', '2026-03-09T08:45:00-04:00', '2026-03-09T09:45:00-04:00'],
    ['Tea at half past four tomorrow', '2026-03-06T16:30:00-05:00', '2026-03-06T17:30:00-05:00'],
    // An hour from 7 to 10 in a text about the evening is in the evening…
    ['Dinner with Marco on Friday at 8 at Carbone', '2026-03-06T20:00:00-05:00', '2026-03-06T21:00:00-05:00'],
    ['Holiday party Friday Dec 18 at 7', '2026-12-18T19:00:00-05:00', '2026-12-18T20:00:00-05:00'],
    // …unless the text is about the morning too, or writes the hour the 24-hour way.
    ['Team breakfast and evening drinks Friday at 8', '2026-03-06T08:00:00-05:00', '2026-03-06T09:00:00-05:00'],
    ['Movie night at 07:30 on Friday', '2026-03-06T07:30:00-05:00', '2026-03-06T08:30:00-05:00'],
    ['Book club Wednesday at 7', '2026-03-11T07:00:00-04:00', '2026-03-11T08:00:00-04:00'],
    // Two bare hours right after a day are a range; a bare end before its start is in the afternoon.
    ['Yard sale Saturday 8-12', '2026-03-07T08:00:00-05:00', '2026-03-07T12:00:00-05:00'],
    ['Car wash Sat 3/14, 10-2', '2026-03-14T10:00:00-04:00', '2026-03-14T14:00:00-04:00'],
    ['Blood drive Tuesday March 24 from 10 to 3', '2026-03-24T10:00:00-04:00', '2026-03-24T15:00:00-04:00'],
  ])('%s', (text, start, end) => {
    expect(read(text, 'America/New_York', NY_WINTER)).toMatchObject({ date_start: start, date_end: end, is_all_day: false });
  });

  it('ends a range at midnight on the next day, across the year end', () => {
    expect(read('Gala Dec 31 8pm-midnight', 'America/New_York', NY_DECEMBER)).toMatchObject({
      title: 'Gala',
      date_start: '2026-12-31T20:00:00-05:00',
      date_end: '2027-01-01T00:00:00-05:00',
    });
  });

  it.each([
    ['Away this weekend', NY_WINTER, '2026-03-07', '2026-03-08'],
    ['Away next weekend', NY_WINTER, '2026-03-14', '2026-03-15'],
    // On a Saturday, "this weekend" is the one under way; "next weekend" the one after.
    ['Cleanup this weekend', NY_NOVEMBER, '2026-11-21', '2026-11-22'],
    ['Cleanup next weekend', NY_NOVEMBER, '2026-11-28', '2026-11-29'],
    ['Cabin over the weekend', NY_WINTER, '2026-03-07', '2026-03-08'],
    ['Camping the weekend of the 21st', NY_WINTER, '2026-03-21', '2026-03-22'],
    ['Visit the weekend of Thursday March 19', NY_WINTER, '2026-03-21', '2026-03-22'],
    ['Quiet week 4/6-4/10', NY_WINTER, '2026-04-06', '2026-04-10'],
    // Weekdays before the dates only label them.
    ['Hackathon Fri\u2013Sun, March 20\u201322', NY_WINTER, '2026-03-20', '2026-03-22'],
    ['Book fair Sat & Sun, 3/21-3/22', NY_WINTER, '2026-03-21', '2026-03-22'],
    ['Friday the 13th movie marathon', NY_WINTER, '2026-03-13', '2026-03-13'],
    // A weekday that never falls on that day soon: the next such day of a month.
    ['Book sale Monday the 31st', NY_WINTER, '2026-08-31', '2026-08-31'],
  ])('all day: %s', (text, ref, start, end) => {
    expect(read(text, 'America/New_York', ref)).toMatchObject({ date_start: start, date_end: end, is_all_day: true });
  });

  it('reads both halves of a numeric range the day-first way where people write so', () => {
    expect(read('Half term 13/4-17/4', 'Europe/London', LONDON)).toMatchObject({ title: 'Half term', date_start: '2026-04-13', date_end: '2026-04-17' });
  });

  it('takes "8-12" away from a day, and a house number, for no time', () => {
    expect(read('Summer camp for ages 8-12, starting June 15', 'America/New_York', NY_WINTER)).toMatchObject({ date_start: '2026-06-15', is_all_day: true });
    expect(read('Open house Thursday from 5-7 at 22 Oak Street', 'America/New_York', NY_WINTER)).toMatchObject({
      title: 'Open house',
      location: '22 Oak Street',
      date_start: '2026-03-05T17:00:00-05:00',
      date_end: '2026-03-05T19:00:00-05:00',
    });
  });

  it('takes a bare "weekend" in a name for no date', () => {
    expect(read('Weekend retreat March 20', 'America/New_York', NY_WINTER)).toMatchObject({ title: 'Weekend retreat', date_start: '2026-03-20', is_all_day: true });
  });
});

describe('zone words, and one moment given for two zones', () => {
  it.each([
    ['Q&A 11am Eastern on March 19', 'America/Los_Angeles', '2026-03-19T11:00:00-04:00', 'America/New_York'],
    ['Launch call 9:30 a.m. (Pacific) Tuesday', 'America/New_York', '2026-03-10T09:30:00-07:00', 'America/Los_Angeles'],
    ['Board meeting 3pm Mountain Standard Time March 20', 'America/New_York', '2026-03-20T15:00:00-06:00', 'America/Denver'],
    // A region word that starts a name is no zone.
    ['Dinner Friday 7pm, Eastern Market', 'America/Chicago', '2026-03-06T19:00:00-06:00', 'America/Chicago'],
  ])('%s', (text, zone, start, eventZone) => {
    const r = read(text, zone, NY_WINTER);
    expect(r.date_start).toBe(start);
    expect(r.timezone).toBe(eventZone);
    expect(r.title).not.toMatch(/Eastern|Pacific|Mountain|\bm\b/);
  });

  it.each([
    // The first time in its zone, on the day either names; the writer's zone is the event's.
    ['Customer AMA 11am PT / 2pm ET, Wednesday March 25', 'Europe/London', '2026-03-25T18:00:00+00:00', '2026-03-25T19:00:00+00:00'],
    ['Wednesday March 25, 11am PT / 2pm ET: customer AMA', 'Europe/London', '2026-03-25T18:00:00+00:00', '2026-03-25T19:00:00+00:00'],
    ['Product demo 10-11am PT / 1-2pm ET on March 19', 'America/New_York', '2026-03-19T13:00:00-04:00', '2026-03-19T14:00:00-04:00'],
    ['Retro 4pm CET (10am ET) on Friday', 'America/Chicago', '2026-03-06T09:00:00-06:00', '2026-03-06T10:00:00-06:00'],
    ['Webinar 9am PT / 12pm ET\nThursday, March 26', 'America/Chicago', '2026-03-26T11:00:00-05:00', '2026-03-26T12:00:00-05:00'],
  ])('%s', (text, zone, start, end) => {
    expect(read(text, zone, NY_WINTER)).toMatchObject({ date_start: start, date_end: end, timezone: zone });
  });
});

describe('titles without the verbs around them, ending where the time begins', () => {
  it.each([
    // The article of a sentence about the event is no part of its name; a name's own stays.
    ['The science fair will be held on Thursday at 6pm in the gym', 'Science fair'],
    ['Our annual gala is March 28 at 7pm', 'Annual gala'],
    ['The Nutcracker matinee Saturday at 2', 'The Nutcracker matinee'],
    ['Soccer practice has been moved to Friday at 4pm', 'Soccer practice'],
    ['Parent night is scheduled for March 19 at 6:30pm', 'Parent night'],
    ['Band concert rescheduled to Monday 7pm', 'Band concert'],
    ['Staff party is happening Friday at 5', 'Staff party'],
    ['Graduation will take place Saturday, June 6 at 10am', 'Graduation'],
    ["Standup's moved to 10:30 tomorrow", 'Standup'],
    ['Reading buddies will meet Tuesday at 2:45 in Room 7', 'Reading buddies'],
    ['Chess club meets Wednesday at 3:30', 'Chess club'],
    // Words that end names stay without an auxiliary before them.
    ['Catch up on Friday at 3', 'Catch up'],
    ['Movie set visit Tuesday 10am', 'Movie set visit'],
    // A separator, then the time: the rest is not the name.
    ['Design sync - Tuesday 2pm, bring laptops', 'Design sync'],
    ['Spring fair: Saturday 10am, rain or shine', 'Spring fair'],
    ['Pottery night Friday 7pm, all materials provided', 'Pottery night'],
    ['Coffee 10 a.m. tomorrow', 'Coffee'],
    ['Hi all, the potluck is next Friday at 6. Bring a dish!', 'Potluck'],
    ['Hello everyone: spring concert Thursday at 7pm', 'Spring concert'],
  ])('%s', (text, title) => {
    expect(read(text, 'America/New_York', NY_WINTER).title).toBe(title);
  });
});

describe('places after the time, with a qualifier or a second place', () => {
  it.each([
    ['Knitting circle Wednesday 2pm, Community Room (lower level)', 'Knitting circle', 'Community Room (lower level)'],
    ['Open mic, Friday March 13, 8-10pm, The Basement / Back Bar', 'Open mic', 'The Basement / Back Bar'],
    ['Chili cook-off, Saturday 5pm, Fire Station 3 parking lot', 'Chili cook-off', 'Fire Station 3 parking lot'],
    ['Study group Sunday 3pm in Room 204 (Science wing)', 'Study group', 'Room 204 (Science wing)'],
    ['Standup tomorrow 9am at Desk 12 / Google Meet', 'Standup', 'Desk 12 / Google Meet'],
    // Not places: a note after the time, a bracket that says something else.
    ['Meetup Thursday 6pm, Free pizza', 'Meetup', null],
    ['Spring fair: Saturday 10am, Rain or shine', 'Spring fair', null],
    ["Lunch at Joe's (my treat) on Friday at 1", 'Lunch (my treat)', "Joe's"],
  ])('%s', (text, title, location) => {
    const r = read(text, 'America/New_York', NY_WINTER);
    expect({ title: r.title, location: r.location }).toEqual({ title, location });
  });
});

describe('a list of days without "every"', () => {
  it.each([
    ['Yoga Mon/Wed/Fri at 7am', '2026-03-06T07:00:00-05:00', 'FREQ=WEEKLY;BYDAY=MO,WE,FR'],
    ['Spanish Tues & Thurs 5pm', '2026-03-05T17:00:00-05:00', 'FREQ=WEEKLY;BYDAY=TU,TH'],
    ['Office hours Weds/Fri 1-2pm', '2026-03-06T13:00:00-05:00', 'FREQ=WEEKLY;BYDAY=WE,FR'],
    ['Team sync Monday and Thursday at 10:30am', '2026-03-05T10:30:00-05:00', 'FREQ=WEEKLY;BYDAY=MO,TH'],
    // Slashed days are a schedule even in a row.
    ['Late shift Fri/Sat 10pm', '2026-03-06T22:00:00-05:00', 'FREQ=WEEKLY;BYDAY=FR,SA'],
  ])('%s is a weekly rule from its first day ahead', (text, start, rule) => {
    expect(read(text, 'America/New_York', NY_WINTER)).toMatchObject({ date_start: start, recurrence_rule: rule });
  });

  it('starts "every Tuesday and Friday 7:00-8:00am" on the first of them not yet begun, in the morning', () => {
    const at = (ref: string) => read('Bootcamp every Tuesday and Friday 7:00-8:00 a.m.', 'America/New_York', ref);
    expect(at('2026-03-10T06:00:00-04:00')).toMatchObject({ date_start: '2026-03-10T07:00:00-04:00', date_end: '2026-03-10T08:00:00-04:00' });
    expect(at('2026-03-10T07:30:00-04:00')).toMatchObject({ date_start: '2026-03-13T07:00:00-04:00', title: 'Bootcamp' });
    expect(at('2026-03-13T09:00:00-04:00')).toMatchObject({ date_start: '2026-03-17T07:00:00-04:00', recurrence_rule: 'FREQ=WEEKLY;BYDAY=TU,FR' });
  });

  it.each([
    ['Book fair Sat & Sun in the gym', '2026-03-07', '2026-03-08'],
    ['Workshop Monday and Tuesday', '2026-03-09', '2026-03-10'],
  ])('takes days in a row joined by "and" for a span, not a rule: %s', (text, start, end) => {
    expect(read(text, 'America/New_York', NY_WINTER)).toMatchObject({ date_start: start, date_end: end, is_all_day: true, recurrence_rule: null });
  });
});

describe('what organizers and friends write: rough times, early hours, changed dates, list lines', () => {
  it.each([
    // A meridiem after the range holds for its start when that is earlier: morning at both ends.
    ['Lap swim Saturday 6-7am', '2026-03-07T06:00:00-05:00', '2026-03-07T07:00:00-05:00'],
    ['Drop-off 5:45-6:15 a.m. Friday', '2026-03-06T05:45:00-05:00', '2026-03-06T06:15:00-05:00'],
    // A time said roughly is the time; a bare hour in it is read as other bare hours are.
    ['Cookout Saturday around 2 in the yard', '2026-03-07T14:00:00-05:00', '2026-03-07T15:00:00-05:00'],
    ['drinks fri ~6?', '2026-03-06T18:00:00-05:00', '2026-03-06T19:00:00-05:00'],
    ['Dinner at 7ish on Saturday', '2026-03-07T19:00:00-05:00', '2026-03-07T20:00:00-05:00'],
    ['call tomorrow 3-ish', '2026-03-06T15:00:00-05:00', '2026-03-06T16:00:00-05:00'],
    ['Meet around 10:30am Tuesday', '2026-03-10T10:30:00-04:00', '2026-03-10T11:30:00-04:00'],
    // An early hour in a text about the early morning stays in the morning…
    ['Sunrise paddle Saturday at 5:45', '2026-03-07T05:45:00-05:00', '2026-03-07T06:45:00-05:00'],
    ['Breakfast shift tomorrow at 6', '2026-03-06T06:00:00-05:00', '2026-03-06T07:00:00-05:00'],
    // …not after a greeting's "Good morning", nor at brunch, which is at 1 in the afternoon too.
    ['Good morning all, practice today at 4', '2026-03-05T16:00:00-05:00', '2026-03-05T17:00:00-05:00'],
    ['Brunch Sunday at 1', '2026-03-08T13:00:00-04:00', '2026-03-08T14:00:00-04:00'],
    // Two bare hours right before a day are a range too.
    ['Open gym 1-3 Sunday', '2026-03-08T13:00:00-04:00', '2026-03-08T15:00:00-04:00'],
    ['Book drive 10-2 Saturday in the lobby', '2026-03-07T10:00:00-05:00', '2026-03-07T14:00:00-05:00'],
  ])('%s', (text, start, end) => {
    expect(read(text, 'America/New_York', NY_WINTER)).toMatchObject({ date_start: start, date_end: end, is_all_day: false });
  });

  it('takes counts and scores for no time', () => {
    expect(read('Around 20 people are coming Saturday', 'America/New_York', NY_WINTER)).toMatchObject({ date_start: '2026-03-07', is_all_day: true });
    expect(read('Bring ~5 dollars Friday', 'America/New_York', NY_WINTER)).toMatchObject({ date_start: '2026-03-06', is_all_day: true });
    expect(read('Team won 3-1 Saturday', 'America/New_York', NY_WINTER)).toMatchObject({ date_start: '2026-03-07', is_all_day: true });
  });

  it.each([
    // The date a change moves the event to is its date; the one before names the old one.
    ['The meeting on Monday has been moved to Tuesday at 3pm', 'Meeting', '2026-03-10T15:00:00-04:00'],
    ["Thursday's practice is pushed back to Friday at 5", 'Practice', '2026-03-06T17:00:00-05:00'],
    ["Tomorrow's review is postponed until Wednesday 11am", 'Review', '2026-03-11T11:00:00-04:00'],
  ])('%s', (text, title, start) => {
    expect(read(text, 'America/New_York', NY_WINTER)).toMatchObject({ title, date_start: start });
  });

  it.each([
    // Newsletter and chat list lines: bullets and dashes before the name are not part of it,
    // and a place written in lowercase ends the list.
    ['\u2022 Fri 3/20, 8:30am \u2014 Picture day, gym', 'Picture day', 'gym', '2026-03-20T08:30:00-04:00'],
    ['- Mon 3/23, 7pm: PTA meeting, library', 'PTA meeting', 'library', '2026-03-23T19:00:00-04:00'],
    ['\u{1F4C5} Webinar, Tuesday 2pm, online', 'Webinar', 'online', '2026-03-10T14:00:00-04:00'],
  ])('%s', (text, title, location, start) => {
    expect(read(text, 'America/New_York', NY_WINTER)).toMatchObject({ title, location, date_start: start });
  });
});

describe('dashes, letters and "and" between dates; places over several list items', () => {
  it.each([
    // A spaced dash between a day and its time separates them: not a range of hours or days,
    // nor a zone offset of "-3".
    ['Quarterly review \u2014 Thursday 3/12 \u2014 2-3pm \u2014 Room 401', '2026-03-12T14:00:00-04:00', '2026-03-12T15:00:00-04:00', 'Room 401'],
    ['Recital - Sunday March 22 - 2:00 PM', '2026-03-22T14:00:00-04:00', '2026-03-22T15:00:00-04:00', null],
    ['Talk March 12 - 10:30 in Hall B', '2026-03-12T10:30:00-04:00', '2026-03-12T11:30:00-04:00', 'Hall B'],
    // "the Y" is a place, not a year from now.
    ['Zumba Tue/Thu 6:30-7:30pm at the Y', '2026-03-05T18:30:00-05:00', '2026-03-05T19:30:00-05:00', 'the Y'],
  ])('%s', (text, start, end, location) => {
    expect(read(text, 'America/New_York', NY_WINTER)).toMatchObject({ date_start: start, date_end: end, location });
  });

  it.each([
    // Two days in a row joined by "and" are a span; days apart are the first of two events.
    ['Parent-teacher conferences are scheduled for March 19 and 20', 'Parent-teacher conferences', '2026-03-19', '2026-03-20'],
    ['Bake sale April 3rd & 4th in the lobby', 'Bake sale', '2026-04-03', '2026-04-04'],
    ['Away Thursday thru Saturday', 'Away', '2026-03-05', '2026-03-07'],
    ['Trip 3/12 - 3/15', 'Trip', '2026-03-12', '2026-03-15'],
  ])('all day: %s', (text, title, start, end) => {
    expect(read(text, 'America/New_York', NY_WINTER)).toMatchObject({ title, date_start: start, date_end: end, is_all_day: true });
  });

  it.each([
    // A possessive and its noun are one place.
    ["Book club Monday 7pm at Maria's house, 14 Oak Lane", 'Book club', "Maria's house, 14 Oak Lane"],
    ["Party at Sam's place Saturday 8pm", 'Party', "Sam's place"],
    ["Coffee at Joe's tomorrow at 9", 'Coffee', "Joe's"],
    // Places in the items after the time, joined by commas, are one place…
    ['Orientation, Wednesday 10am\u2013noon, Student Center, Room 210', 'Orientation', 'Student Center, Room 210'],
    // …but a line that starts with its date has its name in the first item after it.
    ['Thu, Mar 26, 6:30pm, Family Math Night, Cafeteria', 'Family Math Night', 'Cafeteria'],
    ['Thu, Mar 26 | 6:30\u20138 PM | Family Math Night | Cafeteria', 'Family Math Night', 'Cafeteria'],
    ['Mar 26, 6:30pm, Family Math Night', 'Family Math Night', null],
  ])('%s', (text, title, location) => {
    const r = read(text, 'America/New_York', NY_WINTER);
    expect({ title: r.title, location: r.location }).toEqual({ title, location });
  });
});

describe('names as chat, newsletters and pasted invitations write them', () => {
  it.each([
    // A greeting with its punctuation, a chat ask and a trailing emoji are no part of the name.
    ['hey! bday dinner for jess sat 7:30 @ the little owl \u{1F389}', 'Bday dinner for jess', 'the little owl'],
    ['can we move our 1:1 to thurs at 2:30?', '1:1', null],
    ['wanna grab lunch fri at 12:30?', 'Lunch', null],
    // A sentence ends a place; an abbreviation or an initial does not.
    ['Hi everyone,\n\nOur spring concert is Thursday, April 16 at 7:00 PM in the Auditorium. Doors open at 6:30.', 'Spring concert', 'the Auditorium'],
    ["Meet at St. Mark's Church Sunday 10am", 'Meet', "St. Mark's Church"],
    // Outlook's "Microsoft Teams meeting" line is not what the meeting is called.
    ['Microsoft Teams meeting\nQ1 Business Review\nWhen: Thursday, March 19, 2026 9:00 AM-10:00 AM Pacific Time (US & Canada)', 'Q1 Business Review', null],
  ])('%s', (text, title, location) => {
    const r = read(text, 'America/New_York', NY_WINTER);
    expect({ title: r.title, location: r.location }).toEqual({ title, location });
  });
});

describe('where a repetition starts, and zone words before a day', () => {
  it.each([
    // "starting <day>" bounds the rule: its first day from then on that the rule allows.
    ['Tennis lessons Saturdays 8-9am starting next week', '2026-03-14T08:00:00-04:00', '2026-03-14T09:00:00-04:00', 'FREQ=WEEKLY;BYDAY=SA'],
    ['Yoga every Tuesday 6-7pm starting March 12', '2026-03-17T18:00:00-04:00', '2026-03-17T19:00:00-04:00', 'FREQ=WEEKLY;BYDAY=TU'],
    ['Choir Mondays 6:30pm starting March 16', '2026-03-16T18:30:00-04:00', '2026-03-16T19:30:00-04:00', 'FREQ=WEEKLY;BYDAY=MO'],
  ])('%s', (text, start, end, rule) => {
    expect(read(text, 'America/New_York', NY_WINTER)).toMatchObject({ date_start: start, date_end: end, recurrence_rule: rule });
  });

  it('takes the days of a weekly rule from a day list after a "Weekly" that names the event', () => {
    expect(read('Weekly 1:1 Thursdays at 4pm', 'America/New_York', NY_WINTER)).toMatchObject({
      title: 'Weekly 1:1',
      date_start: '2026-03-05T16:00:00-05:00',
      recurrence_rule: 'FREQ=WEEKLY;BYDAY=TH',
    });
  });

  it('reads a region word followed by a day as a zone, and one followed by a name as a place', () => {
    expect(read('Coffee chat 8:30 a.m. Central Friday', 'America/New_York', NY_WINTER)).toMatchObject({
      title: 'Coffee chat',
      date_start: '2026-03-06T08:30:00-06:00',
      timezone: 'America/Chicago',
    });
    expect(read('Dinner Friday 7pm, Eastern Market', 'America/Chicago', NY_WINTER)).toMatchObject({ location: 'Eastern Market', date_start: '2026-03-06T19:00:00-06:00' });
  });
});

describe('holidays by name', () => {
  it.each([
    // Alone, a holiday is the date: its next day from the reference on; its weekend the long one.
    ["No school on Presidents' Day", '2026-01-20T09:00:00-05:00', 'No school', '2026-02-16', '2026-02-16'],
    ['Out for Memorial Day', '2026-05-01T09:00:00-04:00', 'Out', '2026-05-25', '2026-05-25'],
    ['Office closed Labor Day weekend', '2026-08-20T09:00:00-04:00', 'Office closed', '2026-09-05', '2026-09-07'],
    ['Closed Thanksgiving weekend', '2026-10-28T10:00:00-04:00', 'Closed', '2026-11-26', '2026-11-29'],
    ['Closed Christmas Eve and Christmas Day', '2026-12-01T10:00:00-05:00', 'Closed', '2026-12-24', '2026-12-25'],
    // Past this year's, it is next year's; Easter moves.
    ['Brunch on Easter Sunday', '2026-04-10T09:00:00-04:00', 'Brunch', '2027-03-28', '2027-03-28'],
  ])('%s', (text, ref, title, start, end) => {
    expect(read(text, 'America/New_York', ref)).toMatchObject({ title, date_start: start, date_end: end, is_all_day: true });
  });

  it.each([
    // Before a noun it names the event too; beside another date it only names it.
    ["Thanksgiving dinner at 4 at Grandma's", '2026-10-28T10:00:00-04:00', 'Thanksgiving dinner', '2026-11-26T16:00:00-05:00'],
    ['Halloween parade 5pm on Main Street', '2026-10-01T09:00:00-04:00', 'Halloween parade', '2026-10-31T17:00:00-04:00'],
    ['Christmas party Friday at 7', NY_WINTER, 'Christmas party', '2026-03-06T19:00:00-05:00'],
    ["New Year's Eve party Dec 31 9pm-midnight", NY_WINTER, "New Year's Eve party", '2026-12-31T21:00:00-05:00'],
    ['Happy Halloween! Costume parade at 2pm', '2026-10-01T09:00:00-04:00', 'Costume parade', '2026-10-31T14:00:00-04:00'],
  ])('%s', (text, ref, title, start) => {
    expect(read(text, 'America/New_York', ref)).toMatchObject({ title, date_start: start });
  });

  it('takes a street after "on" for the place, and nothing else after it', () => {
    expect(read('Halloween parade 5pm on Main Street', 'America/New_York', '2026-10-01T09:00:00-04:00').location).toBe('Main Street');
    expect(read('Party on the roof Friday 8pm', 'America/New_York', NY_WINTER).location).toBeNull();
  });
});

describe('school and office notices', () => {
  it.each([
    // Who a note is for is not the name; "will be" before a cut date goes with it.
    ['All staff: fire drill tomorrow at 10:15 a.m.', 'Fire drill', null, '2026-03-06T10:15:00-05:00'],
    ['Our next board meeting will be Tuesday, March 17 at 6:30 p.m. via Zoom', 'Next board meeting', 'Zoom', '2026-03-17T18:30:00-04:00'],
    // A time written once after two days holds for the first.
    ['Lacrosse tryouts: Mon 3/9 & Tue 3/10, 3:30\u20135:30 p.m., Turf Field', 'Lacrosse tryouts', 'Turf Field', '2026-03-09T15:30:00-04:00'],
    // "via" names a meeting app, not any word; "All hands" is a name.
    ['Sent via email on Monday', 'Sent via email', null, '2026-03-09'],
    ['All hands: Friday 3pm', 'All hands', null, '2026-03-06T15:00:00-05:00'],
  ])('%s', (text, title, location, start) => {
    expect(read(text, 'America/New_York', NY_WINTER)).toMatchObject({ title, location, date_start: start });
  });
});

describe('languages: English is read, others fail as unsupported_language', () => {
  it.each([
    ['German', 'Einladung zur Weihnachtsfeier am Freitag, 18.12. ab 18 Uhr im Restaurant Adler'],
    ['German, short', 'Treffen Montag 10:00'],
    ['German, an email', 'Betreff: Teammeeting\nHallo zusammen, wir treffen uns morgen um 10 Uhr im Büro. Viele Grüße'],
    ['French', "Réunion d'équipe lundi à 14h dans la salle B"],
    ['French, an invitation', 'Vous êtes invités à notre soirée de printemps le vendredi 20 mars à 19h, chez Marie'],
    ['Spanish', 'Reunión el lunes a las 10 en la oficina'],
    ['Spanish, a message', 'Cena con María el viernes a las 9 en casa de Pablo'],
  ])('%s', (_language, text) => {
    expect(() => read(text, 'Europe/Berlin', LONDON)).toThrow(new ExtractionFailure('unsupported_language'));
  });

  it.each([
    ['Dinner with Jean-Pierre at Café de la Paix on Friday at 8pm', 'Dinner with Jean-Pierre', 'Café de la Paix'],
    ['Coffee with Ana y Carlos at Museo del Prado tomorrow at 10', 'Coffee with Ana y Carlos', 'Museo del Prado'],
    ['Flight to Los Angeles on Friday at 6pm', 'Flight to Los Angeles', null],
    ['Bier und Brezel night at Die Kneipe on Friday 7pm', 'Bier und Brezel night', 'Die Kneipe'],
    ['Lunch at El Pollo Loco tomorrow noon', 'Lunch', 'El Pollo Loco'],
    // "ET" is a zone, not French "et".
    ['Webinar 9am PT / 12pm ET Thursday. Q&A 10am PT / 1pm ET Friday', 'Webinar', null],
    ['Oktoberfest party Saturday 4pm with Herr Müller', 'Oktoberfest party with Herr Müller', null],
  ])('reads English with foreign names: %s', (text, title, location) => {
    const r = read(text, 'America/New_York', NY_WINTER);
    expect({ title: r.title, location: r.location }).toEqual({ title, location });
  });
});

describe('what cannot be read', () => {
  it('fails with a clear reason when the text has no date or time', () => {
    expect(() => read('Please bring snacks for everyone', 'UTC', NY_WINTER)).toThrow(ExtractionFailure);
    expect(() => read('Please bring snacks for everyone', 'UTC', NY_WINTER)).toThrow('No date or time found in the text.');
  });

  it('finds the date after many phrases that name no day', () => {
    // chrono answers "the quarter" with a result that names nothing; those must not use up the phrases read.
    const text = `${'Notes for the quarter, for the whole team. '.repeat(60)}\nLunch tomorrow at 1pm`;
    expect(read(text, 'UTC', '2026-03-05T10:00:00Z')).toMatchObject({ date_start: '2026-03-06T13:00:00+00:00' });
  });

  it('reads "every" and a list of day-name fragments in linear time', () => {
    // 228 characters. The day list read "tues" as "tue"+"s" or "tues", and tried every
    // way to divide the run before refusing it: about a minute of CPU, 4x for each 2 more
    // characters. Now a millisecond or two; the budget is the worker's own per job.
    const text = `every ${'tuesand'.repeat(31)}tuesx`;
    expect(text).toHaveLength(228);
    expect(cpuMsOf(() => read(text, 'America/New_York', NY_WINTER))).toBeLessThan(1000);
    expect(() => read(text, 'America/New_York', NY_WINTER)).toThrow(ExtractionFailure);
    // A plural list that runs into a letter was read again from each of its days.
    const plurals = `Mondays ${'and Mondays '.repeat(600)}andW at 6pm`;
    expect(cpuMsOf(() => read(plurals, 'America/New_York', NY_WINTER))).toBeLessThan(1000);
  });

  it("reads runs of spaced duration units in linear time (chrono-node's patterns, rewritten)", () => {
    // chrono's four duration parsers still spell their joiner the way the rewrite expects.
    expect(rewrittenParsers).toEqual(['ENTimeUnitWithinFormatParser', 'ENTimeUnitAgoFormatParser', 'ENTimeUnitLaterFormatParser', 'ENTimeUnitCasualRelativeFormatParser']);
    // Before: 117 s of CPU for the first, 8 s for the second, 7 s for the third. Now a few ms.
    for (const unit of ['9 m \n ', 'Mon  3 ', '9 min\n\n', 'a couple  h ', '2 hours ,  and  ']) {
      const text = unit.repeat(Math.ceil(8000 / unit.length)).slice(0, 8000);
      expect([unit, cpuMsOf(() => read(text, 'America/New_York', NY_WINTER)) < 1000]).toEqual([unit, true]);
    }
    // What they read is read as before (the answers of the patterns as chrono spells them).
    expect(read('Lunch in 90 minutes', 'America/New_York', NY_WINTER).date_start).toBe('2026-03-05T11:30:00-05:00');
    expect(read('Deploy in a couple of hours', 'America/New_York', NY_WINTER).date_start).toBe('2026-03-05T12:00:00-05:00');
    expect(read('Standup 3 days later at 9am', 'America/New_York', NY_WINTER).date_start).toBe('2026-03-08T09:00:00-04:00');
  });

  it('answers a hostile 8000-character text without choking on it', () => {
    const hostile = '12 at 12 on 12 12:12 12-12 12/12 at The Loft, every Monday for 1 hour (UTC-05:00) '.repeat(100).slice(0, 8000);
    const r = read(hostile, 'America/New_York', NY_WINTER);
    expect(r.date_start).toMatch(/^\d{4}-\d{2}-\d{2}/);
    expect((r.title ?? '').length).toBeLessThanOrEqual(255);
    expect((r.location ?? '').length).toBeLessThanOrEqual(255);
  });
});
