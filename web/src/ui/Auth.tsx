// Sign-in, password reset and invitation (sign-up) pages.
import { useState } from 'preact/hooks';
import type { ComponentChildren } from 'preact';
import { api, ApiError } from '../api.ts';

function AuthFrame(props: { title: string; children: ComponentChildren }) {
  return (
    <main class="auth">
      <div class="auth-card">
        <div class="brand" aria-hidden="true">
          <span class="logo">C</span> Confab
        </div>
        <h1>{props.title}</h1>
        {props.children}
      </div>
    </main>
  );
}

function useSubmit(): [string, boolean, (fn: () => Promise<void>) => (e: Event) => void] {
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const submit = (fn: () => Promise<void>) => async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError('');
    try {
      await fn();
    } catch (err) {
      setError(err instanceof ApiError ? err.message : String(err));
    }
    setBusy(false);
  };
  return [error, busy, submit];
}

function ErrorLine({ error }: { error: string }) {
  return error ? (
    <p class="form-error" role="alert">
      {error}
    </p>
  ) : null;
}

export function LoginPage() {
  const [error, busy, submit] = useSubmit();
  const [sent, setSent] = useState(false);
  const [forgot, setForgot] = useState(false);
  const next = new URLSearchParams(location.search).get('next') ?? '/';
  const onLogin = submit(async () => {
    const form = document.getElementById('login-form') as HTMLFormElement;
    const data = new FormData(form);
    await api.post('/accounts/login', { username: String(data.get('username')), password: String(data.get('password')) }, { raw: true });
    location.href = next.startsWith('/') && !next.startsWith('//') ? next : '/';
  });
  const onForgot = submit(async () => {
    const email = (document.getElementById('reset-email') as HTMLInputElement).value;
    await api.post('/accounts/password/reset', { email }, { raw: true });
    setSent(true);
  });
  if (forgot) {
    return (
      <AuthFrame title="Reset your password">
        {sent ? (
          <p role="status">If an account uses that address, an email with a link to choose a new password is on its way.</p>
        ) : (
          <form onSubmit={onForgot}>
            <label for="reset-email">Email</label>
            <input id="reset-email" type="email" autocomplete="email" required />
            <ErrorLine error={error} />
            <button type="submit" class="primary" disabled={busy}>
              Send reset link
            </button>
          </form>
        )}
        <p>
          <a
            href="/login"
            onClick={(e) => {
              e.preventDefault();
              setForgot(false);
              setSent(false);
            }}
          >
            Back to sign in
          </a>
        </p>
      </AuthFrame>
    );
  }
  return (
    <AuthFrame title="Sign in">
      <form id="login-form" onSubmit={onLogin}>
        <label for="login-email">Email</label>
        <input id="login-email" name="username" type="email" autocomplete="username" required autofocus />
        <label for="login-password">Password</label>
        <input id="login-password" name="password" type="password" autocomplete="current-password" required />
        <ErrorLine error={error} />
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
      <p>
        <button type="button" class="text-button" onClick={() => setForgot(true)}>
          Forgot your password?
        </button>
      </p>
    </AuthFrame>
  );
}

export function ResetPage({ token }: { token: string }) {
  const [error, busy, submit] = useSubmit();
  const [done, setDone] = useState(false);
  const onSubmit = submit(async () => {
    const a = (document.getElementById('new-password') as HTMLInputElement).value;
    const b = (document.getElementById('new-password-2') as HTMLInputElement).value;
    if (a !== b) throw new Error('The two passwords differ.');
    await api.post(`/accounts/password/reset/${encodeURIComponent(token)}`, { new_password: a }, { raw: true });
    setDone(true);
  });
  return (
    <AuthFrame title="Choose a new password">
      {done ? (
        <p role="status">
          Your password is changed. <a href="/login">Sign in</a>
        </p>
      ) : (
        <form onSubmit={onSubmit}>
          <label for="new-password">New password</label>
          <input id="new-password" type="password" autocomplete="new-password" required />
          <label for="new-password-2">Repeat it</label>
          <input id="new-password-2" type="password" autocomplete="new-password" required />
          <ErrorLine error={error} />
          <button type="submit" class="primary" disabled={busy}>
            Change password
          </button>
        </form>
      )}
    </AuthFrame>
  );
}

export function JoinPage({ inviteKey }: { inviteKey: string }) {
  const [error, busy, submit] = useSubmit();
  const onSubmit = submit(async () => {
    const v = (id: string) => (document.getElementById(id) as HTMLInputElement).value;
    const r = await api.post('/invites/accept', {
      key: inviteKey,
      email: v('join-email') || undefined,
      full_name: v('join-name'),
      password: v('join-password'),
    });
    await api.post('/accounts/login', { username: r.email ?? v('join-email'), password: v('join-password') }, { raw: true });
    location.href = '/';
  });
  return (
    <AuthFrame title="Join the organization">
      <form onSubmit={onSubmit}>
        <label for="join-email">Email (as invited)</label>
        <input id="join-email" type="email" autocomplete="email" />
        <label for="join-name">Your name</label>
        <input id="join-name" autocomplete="name" required />
        <label for="join-password">Password</label>
        <input id="join-password" type="password" autocomplete="new-password" required />
        <ErrorLine error={error} />
        <button type="submit" class="primary" disabled={busy}>
          Create my account
        </button>
      </form>
    </AuthFrame>
  );
}
