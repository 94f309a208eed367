import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
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

function servingExt(extraIps: string[]): string {
  const ips = ['127.0.0.1', '10.0.0.1', ...extraIps].map((ip) => `IP:${ip}`).join(',');
  return (
    `subjectAltName=${ips},DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,` +
    'DNS:kubernetes.default.svc.cluster.local\n' +
    'extendedKeyUsage=serverAuth\nkeyUsage=digitalSignature,keyEncipherment\n'
  );
}

/**
 * A CA, a serving certificate for 127.0.0.1/localhost (and `extraIps`, e.g. the address pods reach
 * the API server at) signed by it, and the service-account signing key pair. Reused when present so
 * kubeconfigs stay valid across `berth up` restarts; the serving certificate is reissued when its
 * addresses change.
 */
export async function ensurePki(dir: string, extraIps: string[] = []): Promise<Pki> {
  const p = (f: string) => join(dir, f);
  const pki: Pki = {
    caCert: p('ca.crt'),
    caKey: p('ca.key'),
    serverCert: p('apiserver.crt'),
    serverKey: p('apiserver.key'),
    saKey: p('sa.key'),
    saPub: p('sa.pub'),
  };
  const ext = servingExt(extraIps);
  const extFile = p('apiserver.ext');
  const sameExt = existsSync(extFile) && readFileSync(extFile, 'utf8') === ext;
  if (Object.values(pki).every((f) => existsSync(f)) && sameExt) return pki;

  if (!existsSync(pki.caCert) || !existsSync(pki.caKey)) {
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
  }
  await openssl(['genrsa', '-out', 'apiserver.key', '2048'], dir);
  await openssl(
    ['req', '-new', '-key', 'apiserver.key', '-subj', '/CN=kube-apiserver', '-out', 'apiserver.csr'],
    dir,
  );
  await writeFile(extFile, ext);
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
  if (!existsSync(pki.saKey) || !existsSync(pki.saPub)) {
    await openssl(['genrsa', '-out', 'sa.key', '2048'], dir);
    await openssl(['rsa', '-in', 'sa.key', '-pubout', '-out', 'sa.pub'], dir);
  }
  return pki;
}

export interface IssuedCert {
  cert: string;
  key: string;
}

/**
 * A certificate signed by the CA of `ensurePki`: a client one (CN = user, O = groups) or, with
 * `serverIps`, a serving one. EC P-256 keys: quicker to make than RSA. Reused when present.
 */
export async function issueCert(
  dir: string,
  name: string,
  subject: { cn: string; orgs?: string[]; serverIps?: string[]; serverNames?: string[] },
): Promise<IssuedCert> {
  const out = { cert: join(dir, `${name}.crt`), key: join(dir, `${name}.key`) };
  if (existsSync(out.cert) && existsSync(out.key)) return out;
  const subj = `/CN=${subject.cn}${(subject.orgs ?? []).map((o) => `/O=${o}`).join('')}`;
  const server = subject.serverIps !== undefined;
  const sans = [
    ...(subject.serverIps ?? []).map((ip) => `IP:${ip}`),
    ...(subject.serverNames ?? []).map((n) => `DNS:${n}`),
  ];
  await writeFile(
    join(dir, `${name}.ext`),
    `${server && sans.length ? `subjectAltName=${sans.join(',')}\n` : ''}` +
      `extendedKeyUsage=${server ? 'serverAuth' : 'clientAuth'}\nkeyUsage=digitalSignature\n`,
  );
  await openssl(['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', `${name}.key`], dir);
  await openssl(['req', '-new', '-key', `${name}.key`, '-subj', subj, '-out', `${name}.csr`], dir);
  await openssl(
    [
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      'ca.crt',
      '-CAkey',
      'ca.key',
      '-set_serial',
      `0x${randomBytes(8).toString('hex')}`,
      '-days',
      '3650',
      '-extfile',
      `${name}.ext`,
      '-out',
      `${name}.crt`,
    ],
    dir,
  );
  return out;
}
