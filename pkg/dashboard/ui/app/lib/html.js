// htm bound to Preact: components are tagged templates, no JSX and no compile step of their own.
import htm from 'htm';
import { h } from 'preact';

export const html = htm.bind(h);
