/**
 * AddEvent writes dates as `05/08/2026 09:00 AM` (month first unless `date_format` says
 * DD/MM/YYYY), with or without a time, 12- or 24-hour. Turned into our `YYYY-MM-DD HH:mm`
 * input form; ISO 8601 passes through. Null when it is neither.
 */
const ADDEVENT_DATE = /^(\d{1,2})[/.-](\d{1,2})[/.-](\d{4})(?:[ T]+(\d{1,2}):(\d{2})(?::(\d{2}))?\s*([AaPp][Mm])?)?$/;

export type AddEventDateFormat = 'MM/DD/YYYY' | 'DD/MM/YYYY';

export function fromAddEventDate(value: string, format: AddEventDateFormat = 'MM/DD/YYYY'): string | null {
  const m = ADDEVENT_DATE.exec(value.trim());
  if (!m) return /^\d{4}-\d{2}-\d{2}/.test(value.trim()) ? value.trim() : null;
  const [, a, b, year, h, min, sec, ampm] = m;
  const [month, day] = format === 'DD/MM/YYYY' ? [b, a] : [a, b];
  const date = `${year}-${month.padStart(2, '0')}-${day.padStart(2, '0')}`;
  if (h === undefined) return date;
  let hour = Number(h);
  if (ampm) {
    if (hour < 1 || hour > 12) return null;
    const pm = ampm.toLowerCase() === 'pm';
    hour = (hour % 12) + (pm ? 12 : 0);
  }
  return `${date} ${String(hour).padStart(2, '0')}:${min}:${sec ?? '00'}`;
}
