// Client-side navigation inside the shell: links keep real hrefs (open in a new tab works, the
// server answers every path with the shell), plain clicks go through the History API.
import { useEffect, useState } from 'preact/hooks';
import { base } from './api.js';
import { html } from './html.js';

const listeners = new Set();
const current = () => ({ path: location.pathname.slice(base.length) || '/', search: location.search });

/** A new page is not ready until it has its data (tests and screenshots wait on data-ready). */
const unready = () => {
  document.body.dataset.ready = 'false';
};

export function navigate(to, { replace = false } = {}) {
  const url = `${base}${to}`;
  unready();
  if (replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  for (const l of listeners) l(current());
  window.scrollTo(0, 0);
}

window.addEventListener('popstate', () => {
  unready();
  for (const l of listeners) l(current());
});

export function useLocation() {
  const [loc, setLoc] = useState(current);
  useEffect(() => {
    listeners.add(setLoc);
    return () => listeners.delete(setLoc);
  }, []);
  return loc;
}

/** The query string of the current location as an object. */
export const searchParams = () => Object.fromEntries(new URLSearchParams(location.search));

/** Matches `/queries/:name` against a path; params are decoded. */
export function match(pattern, path) {
  const p = pattern.split('/');
  const s = path.split('/');
  if (p.length !== s.length) return undefined;
  const params = {};
  for (let i = 0; i < p.length; i++) {
    if (p[i].startsWith(':')) params[p[i].slice(1)] = decodeURIComponent(s[i]);
    else if (p[i] !== s[i]) return undefined;
  }
  return params;
}

function onClick(event) {
  const a = event.currentTarget;
  if (
    event.defaultPrevented ||
    event.button !== 0 ||
    event.metaKey ||
    event.ctrlKey ||
    event.shiftKey ||
    event.altKey
  )
    return;
  if (a.target && a.target !== '_self') return;
  event.preventDefault();
  navigate(a.getAttribute('href').slice(base.length));
}

/** A link within the dashboard: `to` is a path under the base path. */
export function Link({ to, children, ...rest }) {
  return html`<a href=${`${base}${to}`} onClick=${onClick} ...${rest}>${children}</a>`;
}

/** Intercepts clicks on the server-rendered navigation and marks the current section. */
export function bindNavigation(path) {
  for (const a of document.querySelectorAll('#nav a, header a.brand')) {
    if (!a.dataset.bound) {
      a.addEventListener('click', onClick);
      a.dataset.bound = 'true';
    }
    const href = a.getAttribute('href').slice(base.length);
    const on = href !== '/' && (path === href || path.startsWith(`${href}/`));
    if (on) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
}
