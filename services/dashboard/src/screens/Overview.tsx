import { api, call } from '../api/client';
import { BASE, Link } from '../router';
import { atLeast, useSession } from '../session';
import { ErrorMessage, Loading, Page, useLoad } from '../ui';

const number = new Intl.NumberFormat();

function Meter({ label, used, limit }: { label: string; used: number; limit: number | null }) {
  const share = limit ? Math.min(1, used / limit) : 0;
  return (
    <div class="meter">
      <div class="meter-text">
        <span>{label}</span>
        <strong>
          {number.format(used)} {limit === null ? '(no limit)' : `of ${number.format(limit)}`}
        </strong>
      </div>
      {limit !== null ? <progress max={limit} value={Math.min(used, limit)} aria-label={`${label}: ${number.format(used)} of ${number.format(limit)}`} class={share >= 0.9 ? 'high' : ''} /> : null}
    </div>
  );
}

/** The team at a glance: its plan, this month's events against the plan's limit, its email against its quotas. */
export function OverviewScreen() {
  const { session } = useSession();
  const account = useLoad(() => call(api.GET('/api/account')).then((r) => r.data), []);
  const pending = useLoad(() => call(api.GET('/api/events', { params: { query: { status: 'pending', per_page: 1, range: 'all' } } })).then((r) => r.data.length), []);
  const a = account.data;
  return (
    <Page title="Overview">
      <ErrorMessage error={account.error} />
      {account.loading ? <Loading /> : null}
      {a ? (
        <div class="grid">
          <section class="card" aria-labelledby="usage-h">
            <h2 id="usage-h">This month</h2>
            <p class="muted">
              Plan <strong>{a.plan.name}</strong> · {a.usage.period} (UTC)
            </p>
            <Meter label="Events created" used={a.usage.current} limit={a.usage.is_unlimited ? null : a.usage.limit} />
            {a.usage.remaining !== null && !a.usage.is_unlimited ? <p>{number.format(a.usage.remaining)} more events can be created this month.</p> : null}
          </section>
          <section class="card" aria-labelledby="mail-h">
            <h2 id="mail-h">Email</h2>
            <Meter label="Sent today" used={a.email.sent_today} limit={a.email.per_day} />
            <Meter label="Sent this month" used={a.email.sent_this_month} limit={a.email.per_month} />
            {a.email.per_recipient_per_day !== null ? <p class="muted">At most {a.email.per_recipient_per_day} messages a day to one address.</p> : null}
          </section>
          <section class="card" aria-labelledby="next-h">
            <h2 id="next-h">Shortcuts</h2>
            <ul class="links">
              <li>
                <Link href={`${BASE}/events/new`}>Create an event</Link>
              </li>
              <li>
                <Link href={`${BASE}/calendars/new`}>Create a calendar</Link>
              </li>
              <li>
                <Link href={`${BASE}/approvals`}>Approval queue</Link>
                {pending.data ? <span class="badge warn">waiting</span> : null}
              </li>
              {atLeast(session.user.role, 'admin') ? (
                <li>
                  <Link href={`${BASE}/tokens`}>API tokens</Link>
                </li>
              ) : null}
            </ul>
          </section>
        </div>
      ) : null}
    </Page>
  );
}
