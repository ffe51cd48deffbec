import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useId, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from './api/client';

/** A screen: its heading takes the focus when the screen opens, so a screen reader starts there. */
export function Page({ title, actions, children }: { title: string; actions?: ComponentChildren; children: ComponentChildren }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${title} · Dashboard`;
    heading.current?.focus({ preventScroll: true });
  }, [title]);
  return (
    <>
      <div class="page-head">
        <h1 tabIndex={-1} ref={heading}>
          {title}
        </h1>
        {actions ? <div class="actions">{actions}</div> : null}
      </div>
      {children}
    </>
  );
}

/** Loads with `load` now and whenever a dependency changes; `reload` loads again. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): { data: T | null; error: ApiError | null; loading: boolean; reload: () => void } {
  const [state, setState] = useState<{ data: T | null; error: ApiError | null; loading: boolean }>({ data: null, error: null, loading: true });
  const [round, setRound] = useState(0);
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true, error: null }));
    load().then(
      (data) => live && setState({ data, error: null, loading: false }),
      (error: unknown) => live && setState({ data: null, error: asApiError(error), loading: false }),
    );
    return () => {
      live = false;
    };
  }, [...deps, round]);
  const reload = useCallback(() => setRound((r) => r + 1), []);
  return { ...state, reload };
}

export const asApiError = (err: unknown): ApiError => (err instanceof ApiError ? err : new ApiError(0, err instanceof Error ? err.message : String(err)));

/**
 * A form's sending state: `run` sends, keeps the API's error (its message above the form,
 * each field's messages beside the field) and says when it is busy.
 */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);
  const run = useCallback(async <T,>(action: () => Promise<T>): Promise<T | undefined> => {
    setBusy(true);
    setError(null);
    try {
      return await action();
    } catch (err) {
      setError(asApiError(err));
      return undefined;
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, setError, run, fieldError: (name: string) => error?.fields[name]?.join(' ') };
}

/** The API's message for what failed, read out when it appears; field errors not shown beside a field are listed too. */
export function ErrorMessage({ error, shownFields = [] }: { error: ApiError | null; shownFields?: string[] }) {
  if (!error) return null;
  const rest = Object.entries(error.fields).filter(([field]) => !shownFields.includes(field));
  return (
    <div class="alert error" role="alert">
      <p>{error.message}</p>
      {rest.length > 0 && (
        <ul>
          {rest.map(([field, messages]) => (
            <li key={field}>
              <code>{field}</code>: {messages.join(' ')}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

export function Notice({ children }: { children: ComponentChildren }) {
  return (
    <div class="alert ok" role="status">
      {children}
    </div>
  );
}

export function Loading({ what = 'Loading' }: { what?: string }) {
  return (
    <p class="muted" role="status">
      {what}…
    </p>
  );
}

interface FieldProps {
  label: string;
  error?: string;
  hint?: ComponentChildren;
  children: (props: { id: string; 'aria-describedby'?: string; 'aria-invalid'?: boolean }) => ComponentChildren;
  class?: string;
}

/** A labelled field with its hint and its error (from the API's 422) beside it. */
export function Field({ label, error, hint, children, class: cls }: FieldProps) {
  const id = useId();
  const described = [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ');
  return (
    <div class={`field${cls ? ` ${cls}` : ''}${error ? ' invalid' : ''}`}>
      <label for={id}>{label}</label>
      {children({ id, 'aria-describedby': described || undefined, 'aria-invalid': error ? true : undefined })}
      {hint ? (
        <small id={`${id}-hint`} class="hint">
          {hint}
        </small>
      ) : null}
      {error ? (
        <small id={`${id}-error`} class="field-error">
          {error}
        </small>
      ) : null}
    </div>
  );
}

interface InputProps {
  label: string;
  type?: 'text' | 'email' | 'password' | 'search' | 'url' | 'number' | 'date' | 'datetime-local';
  required?: boolean;
  disabled?: boolean;
  maxLength?: number;
  min?: number;
  max?: number;
  autoComplete?: string;
  placeholder?: string;
  class?: string;
  value: string;
  onValue: (value: string) => void;
  error?: string;
  hint?: ComponentChildren;
}

export function TextField({ label, value, onValue, error, hint, class: cls, ...rest }: InputProps) {
  return (
    <Field label={label} error={error} hint={hint} class={cls}>
      {/* The props are checked by InputProps above; Preact's types would want each input type's own set. */}
      {(a11y) => <input {...({ type: 'text', ...rest, ...a11y } as object)} value={value} onInput={(e) => onValue(e.currentTarget.value)} />}
    </Field>
  );
}

export function TextArea({ label, value, onValue, error, hint, rows = 4, ...rest }: { label: string; value: string; onValue: (v: string) => void; error?: string; hint?: ComponentChildren; rows?: number; required?: boolean; maxLength?: number; placeholder?: string }) {
  return (
    <Field label={label} error={error} hint={hint}>
      {(a11y) => <textarea {...rest} {...a11y} rows={rows} value={value} onInput={(e) => onValue(e.currentTarget.value)} />}
    </Field>
  );
}

export function Select<V extends string>({ label, value, onValue, options, error, hint, required }: { label: string; value: V; onValue: (v: V) => void; options: Array<[V, string]>; error?: string; hint?: ComponentChildren; required?: boolean }) {
  return (
    <Field label={label} error={error} hint={hint}>
      {(a11y) => (
        <select {...a11y} required={required} value={value} onChange={(e) => onValue(e.currentTarget.value as V)}>
          {options.map(([v, text]) => (
            <option key={v} value={v}>
              {text}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
}

export function Checkbox({
  label,
  checked,
  onChecked,
  hint,
  error,
  disabled,
}: {
  label: string;
  checked: boolean;
  onChecked: (v: boolean) => void;
  hint?: ComponentChildren;
  error?: string;
  disabled?: boolean;
}) {
  const id = useId();
  return (
    <div class={`check${error ? ' invalid' : ''}`}>
      <input id={id} type="checkbox" checked={checked} disabled={disabled} onChange={(e) => onChecked(e.currentTarget.checked)} aria-describedby={hint || error ? `${id}-more` : undefined} />
      <label for={id}>{label}</label>
      {hint || error ? (
        <small id={`${id}-more`} class={error ? 'field-error' : 'hint'}>
          {error ?? hint}
        </small>
      ) : null}
    </div>
  );
}

/** Copies `text`; says so (to a screen reader too). Where the clipboard is refused, selects the text to copy by hand. */
export function CopyButton({ text, label = 'Copy', what }: { text: string; label?: string; what?: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  useEffect(() => {
    if (state === 'idle') return;
    const t = setTimeout(() => setState('idle'), 2500);
    return () => clearTimeout(t);
  }, [state]);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setState('copied');
    } catch {
      setState('failed');
    }
  };
  return (
    <span class="copy">
      <button type="button" class="secondary small" onClick={copy} aria-label={what ? `${label} ${what}` : undefined}>
        {label}
      </button>
      <span class="copy-state" role="status">
        {state === 'copied' ? 'Copied' : state === 'failed' ? 'Copy it by hand: the browser refused' : ''}
      </span>
    </span>
  );
}

/** A value to copy: shown whole, selectable, with its copy button. */
export function CopyValue({ label, value, secret }: { label: string; value: string; secret?: boolean }) {
  return (
    <div class={`copy-value${secret ? ' secret' : ''}`}>
      <span class="copy-label">{label}</span>
      <code tabIndex={0}>{value}</code>
      <CopyButton text={value} what={label} />
    </div>
  );
}

/** A secret the API shows only this once. */
export function ShownOnce({ label, value, children }: { label: string; value: string; children?: ComponentChildren }) {
  return (
    <div class="alert once" role="status">
      <p>
        <strong>Copy the {label.toLowerCase()} now:</strong> it is shown only this once.
      </p>
      <CopyValue label={label} value={value} secret />
      {children}
    </div>
  );
}

/** A button that asks again, in place, before it does something that cannot be undone. */
export function ConfirmButton({ label, question, confirmLabel, onConfirm, busy, children, danger = true }: { label: string; question: string; confirmLabel?: string; onConfirm: () => void; busy?: boolean; children?: ComponentChildren; danger?: boolean }) {
  const [asking, setAsking] = useState(false);
  const yes = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (asking) yes.current?.focus();
  }, [asking]);
  if (!asking) {
    return (
      <button type="button" class={danger ? 'danger small' : 'secondary small'} onClick={() => setAsking(true)} disabled={busy}>
        {label}
      </button>
    );
  }
  return (
    <span class="confirm" role="group" aria-label={question}>
      <span>{question}</span>
      {children}
      <button
        type="button"
        ref={yes}
        class={danger ? 'danger small' : 'small'}
        disabled={busy}
        onClick={() => {
          setAsking(false);
          onConfirm();
        }}
      >
        {confirmLabel ?? label}
      </button>
      <button type="button" class="secondary small" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </span>
  );
}

/** Keyset paging: the cursors of the pages before this one, and the next one's. */
export function usePager(resetKey: string) {
  const [stack, setStack] = useState<Array<string | undefined>>([undefined]);
  useEffect(() => setStack([undefined]), [resetKey]);
  const cursor = stack[stack.length - 1];
  return {
    cursor,
    page: stack.length,
    next: (nextCursor: string) => setStack((s) => [...s, nextCursor]),
    prev: () => setStack((s) => (s.length > 1 ? s.slice(0, -1) : s)),
  };
}

export function Pager({ pager, nextCursor }: { pager: ReturnType<typeof usePager>; nextCursor: string | null | undefined }) {
  if (pager.page === 1 && !nextCursor) return null;
  return (
    <nav class="pager" aria-label="Pages">
      <button type="button" class="secondary small" disabled={pager.page === 1} onClick={pager.prev}>
        Previous page
      </button>
      <span>Page {pager.page}</span>
      <button type="button" class="secondary small" disabled={!nextCursor} onClick={() => nextCursor && pager.next(nextCursor)}>
        Next page
      </button>
    </nav>
  );
}

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

/** A timestamp from the API in the reader's zone; a dash for none. */
export function when(value: string | null | undefined): string {
  if (!value) return '—';
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? value : dateTime.format(d);
}

export function Badge({ tone, children }: { tone?: 'ok' | 'warn' | 'bad' | 'info'; children: ComponentChildren }) {
  return <span class={`badge ${tone ?? ''}`}>{children}</span>;
}

/**
 * A table, named for screen readers. On a narrow screen each row is a card with each cell
 * under its column's name: the names are copied from the header into `data-label`.
 */
export function Table({ caption, children }: { caption: string; children: ComponentChildren }) {
  const table = useRef<HTMLTableElement>(null);
  useLayoutEffect(() => {
    const labels = [...(table.current?.querySelectorAll('thead th') ?? [])].map((th) => th.textContent?.trim() ?? '');
    table.current?.querySelectorAll('tbody tr').forEach((tr) => [...tr.children].forEach((td, i) => td.setAttribute('data-label', labels[i] ?? '')));
  });
  return (
    <div class="table-wrap" role="region" aria-label={caption} tabIndex={0}>
      <table ref={table}>
        <caption class="visually-hidden">{caption}</caption>
        {children}
      </table>
    </div>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <p class="empty">{children}</p>;
}
