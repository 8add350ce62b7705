import type { Credentials } from './sigv4.ts';

/**
 * The AWS credentials to sign with, from the SDK's default provider chain, as the SDK's own
 * client found them: the AWS_* environment variables, the shared config and credentials files
 * (profiles, SSO, processes), a web identity token (EKS service accounts), the container's or
 * the instance's role. The provider keeps what it found and fetches again before temporary
 * credentials expire; its package is loaded with the first request that signs.
 */
export const defaultCredentials = (): (() => Promise<Credentials>) => {
  let provider: Promise<() => Promise<Credentials>> | null = null;
  return async () => {
    provider ??= import('@aws-sdk/credential-provider-node').then(({ defaultProvider }) => defaultProvider());
    return (await provider)();
  };
};
