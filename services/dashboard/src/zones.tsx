import { Field } from './ui';

let zones: string[] | null = null;

/** Every IANA zone this browser knows (Intl), with UTC. */
function allZones(): string[] {
  if (!zones) {
    const known = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : [];
    zones = [...new Set(['UTC', ...known])].sort((a, b) => a.localeCompare(b));
  }
  return zones;
}

/** The reader's own zone, the default for a new calendar. */
export const browserZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';

/** A time-zone picker: a select of every zone, grouped by region, the current value kept even if this browser does not list it. */
export function TimeZoneSelect({ label = 'Time zone', value, onValue, error, hint }: { label?: string; value: string; onValue: (zone: string) => void; error?: string; hint?: string }) {
  const list = allZones();
  const options = value && !list.includes(value) ? [value, ...list] : list;
  const groups = new Map<string, string[]>();
  for (const zone of options) {
    const region = zone.includes('/') ? zone.slice(0, zone.indexOf('/')) : 'Other';
    groups.set(region, [...(groups.get(region) ?? []), zone]);
  }
  return (
    <Field label={label} error={error} hint={hint}>
      {(a11y) => (
        <select {...a11y} value={value} onChange={(e) => onValue(e.currentTarget.value)}>
          {[...groups].map(([region, list]) => (
            <optgroup key={region} label={region}>
              {list.map((zone) => (
                <option key={zone} value={zone}>
                  {zone.replace(/_/g, ' ')}
                </option>
              ))}
            </optgroup>
          ))}
        </select>
      )}
    </Field>
  );
}
