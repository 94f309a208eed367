import { namespace } from './lib.js';

const el = document.getElementById('namespace');
namespace().then(
  (ns) => {
    el.textContent = ns;
  },
  (err) => {
    el.textContent = `unknown (${err.message})`;
  },
);
