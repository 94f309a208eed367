// The `yaml` package as a bundle of its own, loaded only when a YAML view opens.
export { parse, stringify } from 'yaml';
