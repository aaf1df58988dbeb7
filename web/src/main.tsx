// The page's entry: the sign-in pages by path, else the chat app.
import { render } from 'preact';
import 'katex/dist/katex.min.css';
import './highlight.css';
import './style.css';
import { App } from './ui/App.tsx';
import { JoinPage, LoginPage, ResetPage } from './ui/Auth.tsx';
import { applyTheme } from './ui/theme.ts';

applyTheme(localStorage.getItem('confab-theme'));
const path = location.pathname;
const root = document.getElementById('app')!;
const reset = path.match(/^\/accounts\/password\/reset\/([^/]+)\/?$/);
const join = path.match(/^\/join\/([^/]+)\/?$/);

if (path === '/login' || path === '/login/') render(<LoginPage />, root);
else if (reset) render(<ResetPage token={decodeURIComponent(reset[1]!)} />, root);
else if (join) render(<JoinPage inviteKey={decodeURIComponent(join[1]!)} />, root);
else render(<App />, root);
