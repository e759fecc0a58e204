// Planted secrets, one per kind the exporter redacts (test data, not real keys).
import type { SecretKind } from "../../lib/inspect/redact.ts";

/** One planted secret per kind: the text around it, and the part that must vanish. */
export const PLANTED: { kind: SecretKind; text: string; secret: string }[] = [
  {
    kind: "anthropic_key",
    text: "ANTHROPIC_API_KEY=sk-ant-api03-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBa-_xyzXYZ done",
    secret: "sk-ant-api03-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBa-_xyzXYZ",
  },
  {
    kind: "openai_key",
    text: "export OPENAI_API_KEY=sk-proj-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c",
    secret: "sk-proj-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c",
  },
  {
    kind: "google_api_key",
    text: "key=AIzaSyD4e5f6g7h8i9j0k1l2m3n4o5p6q7r8s9t&alt=json",
    secret: "AIzaSyD4e5f6g7h8i9j0k1l2m3n4o5p6q7r8s9t",
  },
  {
    kind: "github_token",
    text: "git clone https://x:ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8@github.com/o/r",
    secret: "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8",
  },
  {
    kind: "slack_token",
    text: "SLACK_TOKEN: xoxb-2048-1024-AbCdEfGhIjKlMnOpQrStUv",
    secret: "xoxb-2048-1024-AbCdEfGhIjKlMnOpQrStUv",
  },
  {
    kind: "aws_access_key",
    text: "aws_access_key_id = AKIAQWERTYUIOPASDFGH\n",
    secret: "AKIAQWERTYUIOPASDFGH",
  },
  {
    kind: "bearer_token",
    text: 'curl -H "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl" api',
    secret: "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl",
  },
  {
    kind: "private_key",
    text:
      "cat id_rsa\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAq7BFUAbYPRIVATEmaterial\nQWxhZGRpbjpvcGVuIHNlc2FtZQ==\n-----END RSA PRIVATE KEY-----\nend",
    secret: "MIIEowIBAAKCAQEAq7BFUAbYPRIVATEmaterial",
  },
  {
    kind: "url_password",
    text: "DATABASE_URL=postgres://admin:Hunter2Secret@db.internal:5432/app",
    secret: "Hunter2Secret",
  },
];
