import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, call } from '../api/client';
import type { AuthOptions, Session } from '../api/types';
import { BASE, Link } from '../router';
import { ErrorMessage, Loading, Notice, TextField, useAction, useLoad } from '../ui';

function Frame({ title, children }: { title: string; children: ComponentChildren }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${title} · Dashboard`;
    heading.current?.focus({ preventScroll: true });
  }, [title]);
  return (
    <main class="narrow" id="main">
      <p class="brand-line">
        <span aria-hidden="true" class="logo" /> Calendar service
      </p>
      <div class="card">
        <h1 tabIndex={-1} ref={heading}>
          {title}
        </h1>
        {children}
      </div>
    </main>
  );
}

/** The token a sign-in link carries in its fragment (never sent to the server by the browser itself). */
function tokenInFragment(): string | null {
  const params = new URLSearchParams(location.hash.replace(/^#/, ''));
  return params.get('token');
}

/**
 * Sign in: with a link sent by email, or with a password where the account has one. Opening
 * the link only loads this screen: it is the POST here that signs in, after which the token is
 * removed from the address bar (and from history).
 */
export function SignInScreen({ onSignedIn }: { onSignedIn: (session: Session) => void }) {
  const [linkToken] = useState(tokenInFragment);
  return linkToken ? <LinkSignIn token={linkToken} onSignedIn={onSignedIn} /> : <SignInForms onSignedIn={onSignedIn} />;
}

function LinkSignIn({ token, onSignedIn }: { token: string; onSignedIn: (session: Session) => void }) {
  const { error, run } = useAction();
  useEffect(() => {
    // Out of the address bar and history at once, whatever the answer.
    history.replaceState(null, '', location.pathname + location.search);
    void run(async () => onSignedIn((await call(api.POST('/api/auth/sessions', { body: { token } }))).data));
  }, []);
  return (
    <Frame title="Signing in">
      {error ? (
        <>
          <ErrorMessage error={error} />
          <p>
            A sign-in link works once and for a short while. <Link href={`${BASE}/sign-in`}>Ask for a new link</Link>.
          </p>
        </>
      ) : (
        <Loading what="Checking your sign-in link" />
      )}
    </Frame>
  );
}

function SignInForms({ onSignedIn }: { onSignedIn: (session: Session) => void }) {
  const options = useLoad<AuthOptions | null>(() => call(api.GET('/api/auth/options')).then((r) => r.data, () => null), []);
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [withPassword, setWithPassword] = useState(false);
  const [sentTo, setSentTo] = useState<string | null>(null);
  const link = useAction();
  const pass = useAction();

  const askLink = (e: Event) => {
    e.preventDefault();
    void link.run(async () => {
      await call(api.POST('/api/auth/sign-in-link', { body: { email } }));
      setSentTo(email);
    });
  };
  const signIn = (e: Event) => {
    e.preventDefault();
    void pass.run(async () => onSignedIn((await call(api.POST('/api/auth/sessions', { body: { email, password } }))).data));
  };
  const passwordAllowed = options.data?.password_sign_in !== false;

  return (
    <Frame title="Sign in">
      {sentTo ? (
        <Notice>
          <p>
            If <strong>{sentTo}</strong> belongs to an account, a sign-in link is on its way. Open it in this browser; it works once.
          </p>
        </Notice>
      ) : null}
      {!withPassword ? (
        <form onSubmit={askLink} noValidate>
          <p class="muted">We email you a link that signs you in.</p>
          <ErrorMessage error={link.error} shownFields={['email']} />
          <TextField label="Email" type="email" autoComplete="email" required value={email} onValue={setEmail} error={link.fieldError('email')} />
          <div class="form-actions">
            <button type="submit" disabled={link.busy}>
              {link.busy ? 'Sending…' : 'Email me a sign-in link'}
            </button>
          </div>
        </form>
      ) : (
        <form onSubmit={signIn} noValidate>
          <ErrorMessage error={pass.error} shownFields={['email', 'password']} />
          <TextField label="Email" type="email" autoComplete="username" required value={email} onValue={setEmail} error={pass.fieldError('email')} />
          <TextField label="Password" type="password" autoComplete="current-password" required value={password} onValue={setPassword} error={pass.fieldError('password')} />
          <div class="form-actions">
            <button type="submit" disabled={pass.busy}>
              {pass.busy ? 'Signing in…' : 'Sign in'}
            </button>
          </div>
        </form>
      )}
      {passwordAllowed ? (
        <p>
          <button type="button" class="link" onClick={() => setWithPassword(!withPassword)}>
            {withPassword ? 'Sign in with an email link instead' : 'Sign in with a password instead'}
          </button>
        </p>
      ) : null}
      {options.data?.signup === 'open' ? (
        <p>
          New here? <Link href={`${BASE}/sign-up`}>Create a team</Link>
        </p>
      ) : null}
    </Frame>
  );
}

/** Sign up: a team and its owner, confirmed by the link the server emails. Only when sign-up is open. */
export function SignUpScreen() {
  const options = useLoad(() => call(api.GET('/api/auth/options')).then((r) => r.data), []);
  const [form, setForm] = useState({ email: '', name: '', team_name: '' });
  const [sent, setSent] = useState(false);
  const { busy, error, run, fieldError } = useAction();
  const set = (key: keyof typeof form) => (value: string) => setForm({ ...form, [key]: value });
  const submit = (e: Event) => {
    e.preventDefault();
    void run(async () => {
      await call(api.POST('/api/auth/sign-up', { body: form }));
      setSent(true);
    });
  };
  if (options.loading) return <Frame title="Create a team"><Loading /></Frame>;
  if (options.data?.signup !== 'open') {
    return (
      <Frame title="Sign-up is closed">
        <p>{options.data?.signup === 'invite' ? 'This service takes new people by invitation: ask a team’s admin to invite you.' : 'This service does not take new teams.'}</p>
        <p>
          <Link href={`${BASE}/sign-in`}>Sign in</Link>
        </p>
      </Frame>
    );
  }
  return (
    <Frame title="Create a team">
      {sent ? (
        <Notice>
          <p>
            Check <strong>{form.email}</strong>: the link in the email finishes your sign-up and signs you in.
          </p>
        </Notice>
      ) : (
        <form onSubmit={submit} noValidate>
          <ErrorMessage error={error} shownFields={['email', 'name', 'team_name']} />
          <TextField label="Your name" autoComplete="name" required value={form.name} onValue={set('name')} error={fieldError('name')} />
          <TextField label="Email" type="email" autoComplete="email" required value={form.email} onValue={set('email')} error={fieldError('email')} />
          <TextField label="Team name" autoComplete="organization" required value={form.team_name} onValue={set('team_name')} error={fieldError('team_name')} />
          <div class="form-actions">
            <button type="submit" disabled={busy}>
              {busy ? 'Sending…' : 'Create the team'}
            </button>
          </div>
        </form>
      )}
      <p>
        Already have an account? <Link href={`${BASE}/sign-in`}>Sign in</Link>
      </p>
    </Frame>
  );
}
