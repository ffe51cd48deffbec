import { Checkbox } from './ui';

/** The choices offered: the times calendar apps offer, largest first (minutes before the start). */
const PRESETS = [10_080, 2_880, 1_440, 120, 60, 30, 15, 0];
/** The API takes at most this many reminders per event. */
export const MAX_REMINDERS = 5;

/** "1 day before", "2 hours before", "At the start". */
export function reminderLabel(minutes: number): string {
  if (minutes === 0) return 'At the start';
  const [n, unit] = minutes % 10_080 === 0 ? [minutes / 10_080, 'week'] : minutes % 1_440 === 0 ? [minutes / 1_440, 'day'] : minutes % 60 === 0 ? [minutes / 60, 'hour'] : [minutes, 'minute'];
  return `${n} ${unit}${n === 1 ? '' : 's'} before`;
}

/**
 * Email reminders as checkboxes: the usual times, and any other time the event or calendar
 * already has (set through the API), so that saving the form never drops one unseen.
 */
export function ReminderChoice({ legend, hint, value, onValue, error }: { legend: string; hint: string; value: number[]; onValue: (v: number[]) => void; error?: string }) {
  const options = [...new Set([...PRESETS, ...value])].sort((a, b) => b - a);
  const full = value.length >= MAX_REMINDERS;
  return (
    <fieldset class="reminders">
      <legend>{legend}</legend>
      <p class="hint">{hint}</p>
      {options.map((minutes) => {
        const on = value.includes(minutes);
        return (
          <Checkbox
            key={minutes}
            label={reminderLabel(minutes)}
            checked={on}
            disabled={!on && full}
            onChecked={(checked) => onValue(checked ? [...value, minutes].sort((a, b) => b - a) : value.filter((m) => m !== minutes))}
          />
        );
      })}
      {full ? <p class="hint">At most {MAX_REMINDERS} reminders: clear one to choose another.</p> : null}
      {error ? <p class="field-error">{error}</p> : null}
    </fieldset>
  );
}
