import { useState } from 'preact/hooks';
import { api, call } from '../api/client';
import { Badge, ConfirmButton, Empty, ErrorMessage, Loading, Page, ShownOnce, Table, TextField, useAction, useLoad, when } from '../ui';

/** API tokens: create one (shown once), see when each was last used, revoke. Extension tokens are listed too. */
export function TokensScreen() {
  const tokens = useLoad(() => call(api.GET('/api/tokens')).then((r) => r.data), []);
  const [name, setName] = useState('');
  const [created, setCreated] = useState<{ name: string; token: string } | null>(null);
  const create = useAction();
  const revoke = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    void create.run(async () => {
      const res = await call(api.POST('/api/tokens', { body: { name } }));
      setCreated({ name: res.data.name ?? name, token: res.data.token });
      setName('');
      tokens.reload();
    });
  };
  return (
    <Page title="API tokens">
      <form class="card form" onSubmit={submit} noValidate>
        <h2>New token</h2>
        <p class="muted">
          A token acts for you and your team on the API: send it as <code>Authorization: Bearer …</code>.
        </p>
        <ErrorMessage error={create.error} shownFields={['name']} />
        <div class="row end">
          <TextField label="Name" hint="What uses it, e.g. “CRM sync”." required maxLength={255} value={name} onValue={setName} error={create.fieldError('name')} />
          <div class="form-actions">
            <button type="submit" disabled={create.busy}>
              {create.busy ? 'Creating…' : 'Create token'}
            </button>
          </div>
        </div>
        {created ? <ShownOnce label="Token" value={created.token} /> : null}
      </form>
      <ErrorMessage error={tokens.error ?? revoke.error} />
      {tokens.loading ? <Loading /> : null}
      {tokens.data && tokens.data.length === 0 ? <Empty>No tokens.</Empty> : null}
      {tokens.data && tokens.data.length > 0 ? (
        <Table caption="Tokens">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Kind</th>
              <th scope="col">Of</th>
              <th scope="col">Created</th>
              <th scope="col">Last used</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {tokens.data.map((t) => (
              <tr key={t.id}>
                <td>{t.name ?? <span class="muted">No name</span>}</td>
                <td>{t.kind === 'extension' ? <Badge tone="info">browser extension</Badge> : <Badge>API</Badge>}</td>
                <td>{t.user.name}</td>
                <td>{when(t.created_at)}</td>
                <td>{t.last_used_at ? when(t.last_used_at) : 'Never'}</td>
                <td>
                  <ConfirmButton
                    label="Revoke"
                    question={`Revoke ${t.name ?? 'this token'}? What uses it stops working at once.`}
                    busy={revoke.busy}
                    onConfirm={() =>
                      void revoke.run(async () => {
                        await call(api.DELETE('/api/tokens/{tok}', { params: { path: { tok: t.id } } }));
                        tokens.reload();
                      })
                    }
                  />
                </td>
              </tr>
            ))}
          </tbody>
        </Table>
      ) : null}
    </Page>
  );
}
