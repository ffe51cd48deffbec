"""Reads an .ics file from stdin with python-icalendar, the way a client that uses the file's
own VTIMEZONE would (Timezone.to_tz), and prints JSON: for each VEVENT its UID, the UTC
instant of its DTSTART and, when it has an RRULE (COUNT only), the UTC instants of the first
`limit` occurrences (argv[1], default 100), expanded on the wall clock with dateutil.

Exits 3 when this interpreter has no icalendar module.
"""
import json
import sys
from datetime import timezone

try:
    import icalendar
    from dateutil import rrule
except ImportError:
    sys.exit(3)


def to_tz(component):
    try:
        return component.to_tz(lookup_tzid=False)  # icalendar 6: build from the component
    except TypeError:
        return component.to_tz()  # icalendar 4: always from the component


def localize(tz, naive):
    if hasattr(tz, 'localize'):
        return tz.localize(naive, is_dst=True)  # pytz: a repeated wall time is the first one
    return naive.replace(tzinfo=tz, fold=0)


def utc_text(dt):
    return dt.astimezone(timezone.utc).strftime('%Y-%m-%dT%H:%M:%SZ')


def main():
    limit = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    cal = icalendar.Calendar.from_ical(sys.stdin.read())
    zones = {str(tz['TZID']): to_tz(tz) for tz in cal.walk('VTIMEZONE')}
    out = []
    for event in cal.walk('VEVENT'):
        prop = event['DTSTART']
        tzid = prop.params.get('TZID')
        start = prop.dt
        naive = start.replace(tzinfo=None)
        if tzid is not None:
            zone = zones[str(tzid)]
            first = localize(zone, naive)
        else:
            zone = None
            first = start
        item = {'uid': str(event['UID']), 'start': utc_text(first)}
        if 'RRULE' in event:
            text = event['RRULE'].to_ical().decode()
            rule = rrule.rrulestr(text, dtstart=naive if zone else start)
            item['occurrences'] = [utc_text(localize(zone, d) if zone else d) for _, d in zip(range(limit), rule)]
        out.append(item)
    json.dump(out, sys.stdout)


main()
