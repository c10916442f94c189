// Provider secrets from this package's credential. Values never reach outputs, errors or logs.
import { IExecuteFunctions, NodeOperationError } from 'n8n-workflow';

export async function readSecrets(ctx: IExecuteFunctions): Promise<Record<string, string>> {
  let creds: { secrets?: unknown } | undefined;
  try {
    creds = (await ctx.getCredentials('resilientProviderSecretsApi')) as { secrets?: unknown };
  } catch {
    return {}; // no credential attached: providers without a secret still work
  }
  const raw = creds?.secrets;
  if (raw === undefined || raw === '') return {};
  let parsed: unknown = raw;
  if (typeof raw === 'string') {
    try {
      parsed = JSON.parse(raw);
    } catch {
      throw new NodeOperationError(ctx.getNode(), 'Resilient Provider Secrets: "Secrets (JSON)" is not valid JSON (the value is not shown)');
    }
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new NodeOperationError(ctx.getNode(), 'Resilient Provider Secrets: "Secrets (JSON)" must be an object of name -> header value');
  }
  return Object.fromEntries(Object.entries(parsed as Record<string, unknown>).map(([k, v]) => [k, String(v)]));
}

export function redact(text: string, secrets: Record<string, string>): string {
  let out = text;
  for (const v of Object.values(secrets)) if (v.length >= 4) out = out.split(v).join('***');
  return out;
}
