import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface Pki {
  caCert: string;
  caKey: string;
  serverCert: string;
  serverKey: string;
  saKey: string;
  saPub: string;
}

async function openssl(args: string[], cwd: string): Promise<void> {
  try {
    await run('openssl', args, { cwd });
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`openssl ${args[0]} failed: ${e.stderr || e.message}`);
  }
}

/**
 * A CA, a serving certificate for 127.0.0.1/localhost signed by it, and the service-account
 * signing key pair. Reused when present so kubeconfigs stay valid across `berth up` restarts.
 */
export async function ensurePki(dir: string): Promise<Pki> {
  const p = (f: string) => join(dir, f);
  const pki: Pki = {
    caCert: p('ca.crt'),
    caKey: p('ca.key'),
    serverCert: p('apiserver.crt'),
    serverKey: p('apiserver.key'),
    saKey: p('sa.key'),
    saPub: p('sa.pub'),
  };
  if (Object.values(pki).every((f) => existsSync(f))) return pki;

  await openssl(['genrsa', '-out', 'ca.key', '2048'], dir);
  await openssl(
    [
      'req',
      '-x509',
      '-new',
      '-key',
      'ca.key',
      '-days',
      '3650',
      '-subj',
      '/CN=berth-local-ca',
      '-out',
      'ca.crt',
    ],
    dir,
  );
  await openssl(['genrsa', '-out', 'apiserver.key', '2048'], dir);
  await openssl(
    ['req', '-new', '-key', 'apiserver.key', '-subj', '/CN=kube-apiserver', '-out', 'apiserver.csr'],
    dir,
  );
  await writeFile(
    p('apiserver.ext'),
    'subjectAltName=IP:127.0.0.1,IP:10.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default.svc\n' +
      'extendedKeyUsage=serverAuth\nkeyUsage=digitalSignature,keyEncipherment\n',
  );
  await openssl(
    [
      'x509',
      '-req',
      '-in',
      'apiserver.csr',
      '-CA',
      'ca.crt',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-days',
      '3650',
      '-extfile',
      'apiserver.ext',
      '-out',
      'apiserver.crt',
    ],
    dir,
  );
  await openssl(['genrsa', '-out', 'sa.key', '2048'], dir);
  await openssl(['rsa', '-in', 'sa.key', '-pubout', '-out', 'sa.pub'], dir);
  return pki;
}
