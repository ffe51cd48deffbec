import { useState } from 'preact/hooks';
import { api, call } from '../api/client';
import type { Role } from '../api/types';
import { atLeast, useSession } from '../session';
import { Badge, ConfirmButton, Empty, ErrorMessage, Loading, Notice, Page, Select, Table, TextField, useAction, useLoad, when } from '../ui';

const ROLE_TEXT: Record<Role, string> = { member: 'Member', admin: 'Admin', owner: 'Owner' };

/** The team's people: everyone may see them; admins invite, change roles and remove (only an owner grants or removes owner). */
export function MembersScreen() {
  const { session, refresh } = useSession();
  const members = useLoad(() => call(api.GET('/api/members')).then((r) => r.data), []);
  const [form, setForm] = useState<{ email: string; name: string; role: Role }>({ email: '', name: '', role: 'member' });
  const [invited, setInvited] = useState<string | null>(null);
  const invite = useAction();
  const change = useAction();
  const me = session.user;
  const canManage = atLeast(me.role, 'admin');
  const grantable: Array<[Role, string]> = (['member', 'admin', 'owner'] as Role[]).filter((r) => r !== 'owner' || me.role === 'owner').map((r) => [r, ROLE_TEXT[r]]);

  const submit = (e: Event) => {
    e.preventDefault();
    setInvited(null);
    void invite.run(async () => {
      const res = await call(api.POST('/api/members', { body: { email: form.email, role: form.role, ...(form.name.trim() ? { name: form.name.trim() } : {}) } }));
      setInvited(`${res.data.email} is invited: an email with a sign-in link is on its way.`);
      setForm({ email: '', name: '', role: 'member' });
      members.reload();
    });
  };
  const setRole = (usr: string, role: Role) =>
    void change.run(async () => {
      await call(api.PUT('/api/members/{usr}', { params: { path: { usr } }, body: { role } }));
      members.reload();
      if (usr === me.id) refresh();
    });

  return (
    <Page title="Members">
      <ErrorMessage error={members.error ?? change.error} />
      {members.loading ? <Loading /> : null}
      {members.data && members.data.length === 0 ? <Empty>No members.</Empty> : null}
      {members.data && members.data.length > 0 ? (
        <Table caption="Members">
          <thead>
            <tr>
              <th scope="col">Member</th>
              <th scope="col">Role</th>
              <th scope="col">Last sign-in</th>
              {canManage ? (
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              ) : null}
            </tr>
          </thead>
          <tbody>
            {members.data.map((m) => {
              // An admin cannot touch an owner; only an owner grants or removes owner.
              const editable = canManage && (m.role !== 'owner' || me.role === 'owner');
              return (
                <tr key={m.id}>
                  <td>
                    {m.name} {m.id === me.id ? <Badge tone="info">you</Badge> : null} {m.status === 'invited' ? <Badge tone="warn">invited</Badge> : null}
                    <div class="muted">{m.email}</div>
                  </td>
                  <td>
                    {editable ? (
                      <Select label={`Role of ${m.name}`} value={m.role} onValue={(role) => setRole(m.id, role)} options={grantable} />
                    ) : (
                      ROLE_TEXT[m.role]
                    )}
                  </td>
                  <td>{m.last_sign_in_at ? when(m.last_sign_in_at) : 'Never'}</td>
                  {canManage ? (
                    <td>
                      {editable ? (
                        <ConfirmButton
                          label="Remove"
                          question={`Remove ${m.name} from the team?`}
                          busy={change.busy}
                          onConfirm={() =>
                            void change.run(async () => {
                              await call(api.DELETE('/api/members/{usr}', { params: { path: { usr: m.id } } }));
                              members.reload();
                            })
                          }
                        />
                      ) : null}
                    </td>
                  ) : null}
                </tr>
              );
            })}
          </tbody>
        </Table>
      ) : null}
      {canManage ? (
        <form class="card form" onSubmit={submit} noValidate>
          <h2>Invite someone</h2>
          {invited ? <Notice>{invited}</Notice> : null}
          <ErrorMessage error={invite.error} shownFields={['email', 'name', 'role']} />
          <div class="row end">
            <TextField label="Email" type="email" required autoComplete="off" value={form.email} onValue={(email) => setForm({ ...form, email })} error={invite.fieldError('email')} />
            <TextField label="Name" autoComplete="off" value={form.name} onValue={(name) => setForm({ ...form, name })} error={invite.fieldError('name')} />
            <Select label="Role" value={form.role} onValue={(role) => setForm({ ...form, role })} options={grantable} error={invite.fieldError('role')} />
          </div>
          <div class="form-actions">
            <button type="submit" disabled={invite.busy}>
              {invite.busy ? 'Inviting…' : 'Send invitation'}
            </button>
          </div>
        </form>
      ) : (
        <p class="muted">Admins and owners invite people and change roles.</p>
      )}
    </Page>
  );
}
