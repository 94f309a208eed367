import { cpSync } from 'node:fs';

/** tsc emits only .js from .ts: the dashboard's static UI files are copied beside its compiled module. */
cpSync('pkg/dashboard/ui/static', 'dist/pkg/dashboard/ui/static', { recursive: true });
