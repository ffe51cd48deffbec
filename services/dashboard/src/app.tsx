import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useMemo, useState } from 'preact/hooks';
import { api, call, setCsrfToken, whenSignedOut } from './api/client';
import type { Role, Session } from './api/types';
import { BASE, Link, match, navigate, useLocation } from './router';
import { atLeast, SessionContext } from './session';
import { asApiError, ErrorMessage, Loading } from './ui';
import { AccountScreen } from './screens/Account';
import { ApprovalsScreen } from './screens/Approvals';
import { CalendarEditScreen, CalendarsScreen } from './screens/Calendars';
import { EventDetailScreen } from './screens/EventDetail';
import { EventEditScreen } from './screens/EventForm';
import { EventsScreen } from './screens/Events';
import { MembersScreen } from './screens/Members';
import { OverviewScreen } from './screens/Overview';
import { SignInScreen, SignUpScreen } from './screens/SignIn';
import { SmartLinkScreen, SmartLinksScreen } from './screens/SmartLinks';
import { SubscribersScreen } from './screens/Subscribers';
import { TokensScreen } from './screens/Tokens';
import { WebhookScreen, WebhooksScreen } from './screens/Webhooks';

type Params = Record<string, string>;
interface Screen {
  pattern: string;
  role: Role;
  render: (p: Params) => ComponentChildren;
}

/** Every signed-in screen, with the least role that may open it. */
const SCREENS: Screen[] = [
  { pattern: '', role: 'member', render: () => <OverviewScreen /> },
  { pattern: '/calendars', role: 'member', render: () => <CalendarsScreen /> },
  { pattern: '/calendars/new', role: 'member', render: () => <CalendarEditScreen /> },
  { pattern: '/calendars/:cal', role: 'member', render: (p) => <CalendarEditScreen cal={p.cal} /> },
  { pattern: '/events', role: 'member', render: () => <EventsScreen /> },
  { pattern: '/events/new', role: 'member', render: () => <EventEditScreen /> },
  { pattern: '/events/:cal/:evt', role: 'member', render: (p) => <EventDetailScreen cal={p.cal} evt={p.evt} /> },
  { pattern: '/events/:cal/:evt/edit', role: 'member', render: (p) => <EventEditScreen cal={p.cal} evt={p.evt} /> },
  { pattern: '/approvals', role: 'member', render: () => <ApprovalsScreen /> },
  { pattern: '/subscribers', role: 'member', render: () => <SubscribersScreen /> },
  { pattern: '/smart-links', role: 'member', render: () => <SmartLinksScreen /> },
  { pattern: '/smart-links/:sl', role: 'member', render: (p) => <SmartLinkScreen sl={p.sl} /> },
  { pattern: '/webhooks', role: 'member', render: () => <WebhooksScreen /> },
  { pattern: '/webhooks/:wh', role: 'member', render: (p) => <WebhookScreen wh={p.wh} /> },
  { pattern: '/tokens', role: 'admin', render: () => <TokensScreen /> },
  { pattern: '/members', role: 'member', render: () => <MembersScreen /> },
  { pattern: '/account', role: 'member', render: () => <AccountScreen /> },
];

const NAV: Array<{ href: string; label: string; role: Role }> = [
  { href: '', label: 'Overview', role: 'member' },
  { href: '/calendars', label: 'Calendars', role: 'member' },
  { href: '/events', label: 'Events', role: 'member' },
  { href: '/approvals', label: 'Approvals', role: 'member' },
  { href: '/subscribers', label: 'Subscribers', role: 'member' },
  { href: '/smart-links', label: 'Smart links', role: 'member' },
  { href: '/webhooks', label: 'Webhooks', role: 'member' },
  { href: '/tokens', label: 'API tokens', role: 'admin' },
  { href: '/members', label: 'Members', role: 'member' },
  { href: '/account', label: 'Account', role: 'member' },
];

type State = { status: 'loading' } | { status: 'signed-out' } | { status: 'signed-in'; session: Session } | { status: 'failed'; message: string };

export function App() {
  const { path } = useLocation();
  const [state, setState] = useState<State>({ status: 'loading' });

  const signedIn = useCallback((session: Session) => {
    setCsrfToken(session.csrf_token);
    setState({ status: 'signed-in', session });
  }, []);
  const signedOut = useCallback(() => {
    setCsrfToken(null);
    setState({ status: 'signed-out' });
  }, []);

  const load = useCallback(async () => {
    try {
      signedIn((await call(api.GET('/api/session'))).data);
    } catch (err) {
      const e = asApiError(err);
      if (e.status === 401) signedOut();
      else setState({ status: 'failed', message: e.message });
    }
  }, [signedIn, signedOut]);

  // Read while rendering, before any effect runs: the link's screen (a child, whose effects
  // run before this one's) takes the token out of the address bar at once. Read later, the
  // app would also ask for the session, and that 401, answered after the link's sign-in,
  // would sign the person out again.
  const [openedWithLink] = useState(() => Boolean(match(`${BASE}/sign-in`, location.pathname)) && location.hash.includes('token='));
  useEffect(() => {
    whenSignedOut(signedOut);
    // The sign-in link's screen signs in itself: no session to ask for first.
    if (openedWithLink) setState({ status: 'signed-out' });
    else void load();
  }, []);

  const signOut = useCallback(async () => {
    await call(api.DELETE('/api/session')).catch(() => undefined);
    signedOut();
    navigate(`${BASE}/sign-in`);
  }, [signedOut]);

  const context = useMemo(() => (state.status === 'signed-in' ? { session: state.session, refresh: () => void load(), signOut } : null), [state, load, signOut]);

  const onSignInScreen = Boolean(match(`${BASE}/sign-in`, path));
  useEffect(() => {
    // Signed in already: the sign-in screen has nothing to do.
    if (onSignInScreen && state.status === 'signed-in' && !location.hash.includes('token=')) navigate(BASE, { replace: true });
  }, [onSignInScreen, state.status]);

  if (match(`${BASE}/sign-up`, path)) return <SignUpScreen />;
  if (onSignInScreen || state.status === 'signed-out') {
    return (
      <SignInScreen
        onSignedIn={(session) => {
          signedIn(session);
          // Back where the person was when the session ended, or where the link said.
          const next = new URLSearchParams(location.search).get('next');
          const target = !onSignInScreen ? location.pathname + location.search : next?.startsWith(`${BASE}/`) && !next.startsWith(`${BASE}/sign-`) ? next : BASE;
          navigate(target, { replace: true });
        }}
      />
    );
  }
  if (state.status === 'loading') return <Loading what="Opening the dashboard" />;
  if (state.status === 'failed') {
    return (
      <main class="narrow" id="main">
        <h1>The dashboard could not start</h1>
        <ErrorMessage error={asApiError(new Error(state.message))} />
        <button type="button" onClick={() => void load()}>
          Try again
        </button>
      </main>
    );
  }
  return (
    <SessionContext.Provider value={context}>
      <Shell session={state.session} path={path} onSignOut={signOut} />
    </SessionContext.Provider>
  );
}

function Shell({ session, path, onSignOut }: { session: Session; path: string; onSignOut: () => void }) {
  const [menuOpen, setMenuOpen] = useState(false);
  useEffect(() => setMenuOpen(false), [path]);
  const role = session.user.role;
  const rest = path === BASE ? '' : path.slice(BASE.length);
  let found: { screen: Screen; params: Params } | null = null;
  for (const screen of SCREENS) {
    const params = match(screen.pattern, rest);
    if (params) {
      found = { screen, params };
      break;
    }
  }
  const current = (href: string) => (href === '' ? rest === '' : rest === href || rest.startsWith(`${href}/`));
  return (
    <div class="shell">
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <Link href={BASE} class="brand">
          <span aria-hidden="true" class="logo" />
          <span>{session.team.name}</span>
        </Link>
        <button type="button" class="menu-button secondary small" aria-expanded={menuOpen} aria-controls="nav" onClick={() => setMenuOpen(!menuOpen)}>
          Menu
        </button>
        <div class="who">
          <span class="who-name">
            {session.user.name} <span class="badge info">{role}</span>
          </span>
          <button type="button" class="secondary small" onClick={onSignOut}>
            Sign out
          </button>
        </div>
      </header>
      <nav id="nav" class={`side${menuOpen ? ' open' : ''}`} aria-label="Dashboard">
        <ul>
          {NAV.filter((item) => atLeast(role, item.role)).map((item) => (
            <li key={item.href}>
              <Link href={`${BASE}${item.href}`} aria-current={current(item.href) ? 'page' : undefined}>
                {item.label}
              </Link>
            </li>
          ))}
        </ul>
      </nav>
      <main id="main" class="content">
        {!found ? (
          <NotFound />
        ) : !atLeast(role, found.screen.role) ? (
          <Forbidden needed={found.screen.role} />
        ) : (
          found.screen.render(found.params)
        )}
      </main>
    </div>
  );
}

function NotFound() {
  return (
    <>
      <h1>Not found</h1>
      <p>
        There is no such screen. <Link href={BASE}>Go to the overview</Link>.
      </p>
    </>
  );
}

function Forbidden({ needed }: { needed: Role }) {
  return (
    <>
      <h1>Not for your role</h1>
      <p>This screen is for a team’s {needed === 'owner' ? 'owner' : 'admins and owners'}. Ask one of them if you need it.</p>
    </>
  );
}
