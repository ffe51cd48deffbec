import { useState } from 'preact/hooks';
import { api, call } from '../api/client';
import { useSession } from '../session';
import { ConfirmButton, ErrorMessage, Notice, Page, TextField, useAction, when } from '../ui';

/** The signed-in person: their password, signing out here or everywhere, and (owners) deleting the team. */
export function AccountScreen() {
  const { session, refresh, signOut } = useSession();
  const [form, setForm] = useState({ current_password: '', password: '' });
  const [done, setDone] = useState<string | null>(null);
  const save = useAction();
  const everywhere = useAction();
  const removal = useAction();
  const [confirmName, setConfirmName] = useState('');
  const hasPassword = session.user.has_password;
  const submit = (e: Event) => {
    e.preventDefault();
    setDone(null);
    void save.run(async () => {
      await call(api.PUT('/api/account/password', { body: hasPassword ? form : { password: form.password } }));
      setForm({ current_password: '', password: '' });
      setDone('Your password is saved.');
      refresh();
    });
  };
  return (
    <Page title="Account">
      <section class="card">
        <h2>{session.user.name}</h2>
        <p>
          {session.user.email} · {session.user.role} of {session.team.name}
        </p>
        {session.expires_at ? <p class="muted">This session ends {when(session.expires_at)}.</p> : null}
      </section>
      <form class="card form" onSubmit={submit} noValidate>
        <h2>{hasPassword ? 'Change your password' : 'Set a password'}</h2>
        <p class="muted">Optional: you can always sign in with a link sent by email.</p>
        {done ? <Notice>{done}</Notice> : null}
        <ErrorMessage error={save.error} shownFields={['password', 'current_password']} />
        {/* A username field for password managers, which pair a password with an account. */}
        <input type="email" autoComplete="username" value={session.user.email} readOnly hidden />
        {hasPassword ? <TextField label="Current password" type="password" autoComplete="current-password" value={form.current_password} onValue={(current_password) => setForm({ ...form, current_password })} error={save.fieldError('current_password')} /> : null}
        <TextField label="New password" type="password" autoComplete="new-password" value={form.password} onValue={(password) => setForm({ ...form, password })} error={save.fieldError('password')} />
        <div class="form-actions">
          <button type="submit" disabled={save.busy}>
            {save.busy ? 'Saving…' : 'Save password'}
          </button>
        </div>
      </form>
      <section class="card">
        <h2>Sessions</h2>
        <ErrorMessage error={everywhere.error} />
        <div class="form-actions">
          <button type="button" class="secondary" onClick={() => void signOut()}>
            Sign out
          </button>
          <ConfirmButton
            label="Sign out everywhere"
            question="End every session of yours, on every device, this one too?"
            busy={everywhere.busy}
            onConfirm={() =>
              void everywhere.run(async () => {
                await call(api.POST('/api/session/revoke-all'));
                await signOut();
              })
            }
          />
        </div>
      </section>
      {session.user.role === 'owner' ? (
        <section class="card">
          <h2>Delete the team</h2>
          <p>
            Everything of {session.team.name} stops at once: every member’s sessions and tokens, its event and calendar pages, feeds, forms and webhooks; emails not yet sent are not
            sent. An hour later its events and records are deleted for good. Invitees are not told: delete events with “notify invitees” first if they should be. There is no undo.
          </p>
          <ErrorMessage error={removal.error} shownFields={['confirm']} />
          <TextField label="Type the team’s name to confirm" value={confirmName} onValue={setConfirmName} error={removal.fieldError('confirm')} autoComplete="off" />
          <div class="form-actions">
            <ConfirmButton
              label="Delete the team"
              question={`Delete ${session.team.name} and everything it has, for everyone?`}
              busy={removal.busy}
              onConfirm={() =>
                void removal.run(async () => {
                  await call(api.DELETE('/api/account/team', { body: { confirm: confirmName } }));
                  // The session ended with the team: the dashboard shows the sign-in screen.
                  refresh();
                })
              }
            />
          </div>
        </section>
      ) : null}
    </Page>
  );
}
