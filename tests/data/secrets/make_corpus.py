"""Regenerate ``corpus.json``: fake, realistically shaped secrets and look-alikes.

Every token here is random (seeded, so the file is reproducible) with the right
prefix and length; none is a real credential.  Each secret format is placed in
several settings (a command, an error, prose, JSON); each look-alike family
(commit SHAs, UUIDs, versions, lockfile hashes, base64 images, ids) likewise.
Run: ``python3 tests/data/secrets/make_corpus.py``.
"""

import base64
import hashlib
import json
import os
import random
import string
import uuid

R = random.Random(20261124)
UP = string.ascii_uppercase + string.digits
AN = string.ascii_letters + string.digits
LO = string.ascii_lowercase + string.digits
URL = AN + "-_"
HEX = "0123456789abcdef"
B64 = AN + "+/"


def pick(chars, n):
    return "".join(R.choice(chars) for _ in range(n))


def b64u(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def rbytes(n):
    return bytes(R.randrange(256) for _ in range(n))


def jwt(payload):
    head = b64u(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    return "%s.%s.%s" % (head, b64u(json.dumps(payload).encode()), b64u(rbytes(32)))


def pem(label, lines=6):
    body = "\n".join(pick(B64, 64) for _ in range(lines))
    return "-----BEGIN %s-----\n%s\n-----END %s-----" % (label, body, label)


# --- classic helpers -------------------------------------------------------------------------

def akia(p="AKIA"):
    return p + pick(UP, 16)


def aws_secret():
    return pick(AN + "/+", 40)


def ghp(p):
    return p + pick(AN, 36)


def slack(p):
    return "%s-%s-%s-%s" % (p, pick(string.digits, 12), pick(string.digits, 13), pick(AN, 24))


def sk_openai():
    return "sk-" + pick(AN, 20) + "T3BlbkFJ" + pick(AN, 20)


def sk_proj():
    return "sk-proj-" + pick(URL, 74) + "T3BlbkFJ" + pick(URL, 74)


def sk_ant():
    return "sk-ant-api03-" + pick(URL, 93) + "AA"


def hexs(n):
    return pick("0123456789abcdef", n)


def b64(n):
    return base64.b64encode(bytes(R.randrange(256) for _ in range(n))).decode()


def classic_positives():
    """Hand-written cases kept from the first corpus."""
    P = []

    def add(family, text, secret):
        assert secret in text, (family, text)
        P.append({"family": family, "where": "classic", "text": text, "secret": secret})

    # AWS access key ids and labelled secret keys
    k = akia(); add("aws_access_key", "aws_access_key_id = %s" % k, k)
    k = akia(); add("aws_access_key", "export AWS_ACCESS_KEY_ID=%s" % k, k)
    k = akia("ASIA"); add("aws_access_key", '{"Credentials": {"AccessKeyId": "%s", "Expiration": "2024-06-07T12:00:00Z"}}' % k, k)
    k = akia(); add("aws_access_key", "The leaked key %s was rotated yesterday." % k, k)
    k = akia(); add("aws_access_key", "Error: InvalidClientTokenId for access key %s (status 403)" % k, k)
    s = aws_secret(); add("aws_secret_key", "[default]\naws_access_key_id = AKIA%s\naws_secret_access_key = %s\n" % (pick(UP, 16), s), s)
    s = aws_secret(); add("aws_secret_key", "AWS_SECRET_ACCESS_KEY=%s" % s, s)
    s = aws_secret(); add("aws_secret_key", '{"AccessKeyId": "ASIA%s", "SecretAccessKey": "%s", "SessionToken": "IQoJb3JpZ2luX2VjE%s"}' % (pick(UP, 16), s, pick(AN, 120)), s)
    s = aws_secret(); add("aws_secret_key", "aws_secret_key: '%s'" % s, s)
    # GitHub
    for p in ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"):
        t = ghp(p); add("github_token", "GH token in use: %s" % t, t)
    t = ghp("ghp_"); add("github_token", "git remote set-url origin https://%s@github.com/acme/api.git" % t, t)
    t = ghp("ghp_"); add("github_token", "curl -H 'Authorization: token %s' https://api.github.com/user" % t, t)
    t = "github_pat_" + pick(AN, 22) + "_" + pick(AN, 59); add("github_token", "GITHUB_PAT: %s" % t, t)
    t = "github_pat_" + pick(AN, 22) + "_" + pick(AN, 59); add("github_token", "echo %s | gh auth login --with-token" % t, t)
    # GitLab
    t = "glpat-" + pick(URL, 20); add("gitlab_token", "git clone https://oauth2:%s@gitlab.com/acme/app.git" % t, t)
    t = "glpat-" + pick(URL, 20); add("gitlab_token", "PRIVATE-TOKEN: %s" % t, t)
    # Slack
    for p in ("xoxb", "xoxp", "xoxa", "xoxr", "xoxs"):
        t = slack(p); add("slack_token", "slack_client = WebClient(token=\"%s\")" % t, t)
    h = "T%s/B%s/%s" % (pick(UP, 8), pick(UP, 10), pick(AN, 24))
    add("slack_webhook", "curl -X POST -d @msg.json https://hooks.slack.com/services/%s" % h, h)
    h = "T%s/B%s/%s" % (pick(UP, 8), pick(UP, 10), pick(AN, 24))
    add("slack_webhook", '{"webhook_url": "https://hooks.slack.com/services/%s", "channel": "#ops"}' % h, h)
    # Stripe
    for p in ("sk_live_", "rk_live_", "sk_test_", "pk_live_"):
        t = p + pick(AN, 99 if p != "pk_live_" else 24); add("stripe_key", "stripe.api_key = '%s'" % t if p.startswith("sk") else "Using key %s for checkout" % t, t)
    t = "whsec_" + pick(AN, 32); add("stripe_key", "endpoint secret %s" % t, t)
    # OpenAI / Anthropic / Google / npm
    t = sk_openai(); add("openai_key", 'client = OpenAI(api_key="%s")' % t, t)
    t = sk_proj(); add("openai_key", "OPENAI_API_KEY=%s" % t, t)
    t = sk_proj(); add("openai_key", "openai.AuthenticationError: Incorrect API key provided: %s." % t, t)
    t = sk_ant(); add("anthropic_key", "export ANTHROPIC_API_KEY='%s'" % t, t)
    t = sk_ant(); add("anthropic_key", '{"headers": {"x-api-key": "%s", "anthropic-version": "2023-06-01"}}' % t, t)
    t = "AIza" + pick(URL, 35); add("google_api_key", "https://maps.googleapis.com/maps/api/geocode/json?address=x&key=%s" % t, t)
    t = "AIza" + pick(URL, 35); add("google_api_key", "const firebaseConfig = { apiKey: \"%s\", authDomain: \"x.firebaseapp.com\" };" % t, t)
    t = "npm_" + pick(AN, 36); add("npm_token", "//registry.npmjs.org/:_authToken=%s" % t, t)
    t = "npm_" + pick(AN, 36); add("npm_token", "NPM_TOKEN: %s" % t, t)
    # JWTs
    t = jwt({"sub": "1234567890", "name": "Jane", "iat": 1717750000}); add("jwt", "id_token=%s&state=af0ifjsldkj" % t, t)
    t = jwt({"user_id": 42, "exp": 1717753600}); add("jwt", "Decoded session %s successfully" % t, t)
    t = jwt({"iss": "https://auth.example.com", "aud": "api"}); add("jwt", "X-Auth-Token header: %s" % t, t)
    # PEM private keys
    for label in ("RSA PRIVATE KEY", "EC PRIVATE KEY", "OPENSSH PRIVATE KEY", "PRIVATE KEY", "ENCRYPTED PRIVATE KEY"):
        key = pem(label)
        body = key.split("\n")[2]
        add("private_key", "$ cat ~/.ssh/id_key\n%s\n$ ls" % key, body)
    key = pem("RSA PRIVATE KEY"); body = key.split("\n")[3]
    add("private_key", json.dumps({"file": "key.pem", "content": key}), body)
    key = pem("PRIVATE KEY"); cut = key[: key.index("-----END") - 20]; body = cut.split("\n")[2]
    add("private_key", "head -c 300 key.pem\n" + cut, body)
    # Authorization / Cookie headers
    t = pick(URL, 40); add("bearer", "curl -H 'Authorization: Bearer %s' https://api.example.com/v1/me" % t, t)
    t = pick(URL, 24) + "." + pick(URL, 30); add("bearer", "> GET /v2/items HTTP/1.1\n> Authorization: Bearer %s\n> Accept: */*" % t, t)
    t = base64.b64encode(b"admin:" + pick(AN, 12).encode()).decode(); add("basic_auth", "Authorization: Basic %s" % t, t)
    t = base64.b64encode(b"ci-bot:" + pick(AN, 16).encode()).decode(); add("basic_auth", '{"headers": {"Content-Type": "application/json", "Authorization": "Basic %s"}}' % t, t)
    t = pick(AN, 32); add("bearer", "requests.get(url, headers={'Authorization': f'Bearer {tok}'}) # tok=Bearer %s" % t, t)
    t = pick(AN, 32); add("cookie", "Cookie: sessionid=%s; csrftoken=%s" % (t, pick(AN, 32)), t)
    t = pick(AN, 40); add("cookie", "< Set-Cookie: _app_session=%s; Path=/; HttpOnly; Secure" % t, t)
    t = pick(AN, 28); add("cookie", "curl -b x -H \"Cookie: auth=%s\" https://example.com" % t, t)
    # Passwords in URLs
    pw = pick(AN, 16); add("url_password", "DATABASE_URL=postgres://app:%s@db.internal:5432/app" % pw, pw)
    pw = pick(AN, 14); add("url_password", "mongodb+srv://admin:%s@cluster0.ab1cd.mongodb.net/test?retryWrites=true" % pw, pw)
    pw = pick(AN, 20); add("url_password", "connecting to redis://:%s@cache:6379/0" % pw, pw)
    pw = pick(AN, 10) + "!x"; add("url_password", "pip install --index-url https://deploy:%s@pypi.corp.example/simple pkg" % pw, pw)
    # .env / shell / config assignments
    v = pick(AN, 32); add("env_secret", "SOMETHING_SECRET=%s" % v, v)
    v = pick(AN, 18); add("env_secret", "# database\nDB_HOST=localhost\nDB_PASSWORD=%s\nDB_PORT=5432" % v, v)
    v = pick(AN, 40); add("env_secret", 'export API_TOKEN="%s"' % v, v)
    v = pick(AN, 24); add("env_secret", "services:\n  db:\n    environment:\n      - POSTGRES_PASSWORD=%s\n" % v, v)
    v = pick(AN, 48); add("env_secret", "ENV JWT_SECRET=%s" % v, v)
    v = pick(AN, 50); add("env_secret", "SECRET_KEY = 'django-insecure-%s'" % v, v)
    v = pick(AN, 30); add("env_secret", "STRIPE_WEBHOOK_SECRET=%s\nNEXT_PUBLIC_URL=https://example.com" % v, v)
    v = pick(AN, 22); add("env_secret", "export GH_TOKEN=%s" % v, v)
    # passwords and secrets in config and prose
    add("password", "password: hunter2", "hunter2")
    add("password", "The admin password is Tr0ub4dor&3 so please change it.", "Tr0ub4dor&3")
    v = pick(AN, 12) + "9"; add("password", "spring.datasource.password=%s" % v, v)
    v = pick(AN, 14); add("password", "database:\n  host: db\n  user: app\n  password: \"%s\"\n" % v, v)
    v = pick(AN, 10); add("password", "mysql -u root --password=%s -e 'show databases'" % v, v)
    v = pick(AN, 16); add("password", "[client]\nuser = backup\npassword = \"%s\"\n" % v, v)
    v = pick(AN, 11) + "#"; add("password", "I set the wifi passphrase: %s yesterday" % v, v)
    v = pick(AN, 24); add("secret", "client_secret: %s" % v, v)
    v = pick(AN, 32); add("secret", "./deploy.sh --token=%s --env prod" % v, v)
    v = pick(AN, 36); add("secret", 'apiKey = "%s"' % v, v)
    v = pick(AN, 20) + "7"; add("password", 'DATABASES = {"default": {"USER": "app", "PASSWORD": "%s"}}' % v, v)
    s2 = aws_secret(); add("aws_secret_key", "aws configure set aws_secret_access_key %s" % s2, s2)
    v = "ya29." + pick(URL, 60); add("secret", '{"access_token": "%s", "token_type": "Bearer", "expires_in": 3599}' % v, v)
    v = pick(AN, 30) + "8"; add("secret", "  refresh_token: %s" % v, v)
    # secrets inside serialized JSON strings
    v = pick(AN, 15)
    add("json_embedded", json.dumps({"tool_input": {"content": json.dumps({"db": {"password": v}})}}), v)
    v = pick(AN, 40)
    add("json_embedded", json.dumps({"tool_response": {"stdout": json.dumps({"access_token": v, "expires_in": 3600})}}), v)
    t = ghp("ghp_")
    add("json_embedded", json.dumps({"output": json.dumps({"env": {"GITHUB_TOKEN": t}})}), t)
    v = pick(AN, 20)
    add("json_embedded", json.dumps({"message": "config was " + json.dumps({"api_key": v, "region": "eu"})}), v)
    return P


def classic_negatives():
    """Hand-written look-alikes kept from the first corpus."""
    N = []

    def add(why, text):
        N.append({"family": why, "text": text})

    for _ in range(3):
        add("git sha", "commit %s\nAuthor: Jane <jane@example.com>" % hexs(40))
    add("short shas", "%s Fix flaky test\n%s Bump deps\n%s Merge pull request #42" % (hexs(7), hexs(9), hexs(12)))
    add("git log oneline", "* %s (HEAD -> main, origin/main) feat: add token counter" % hexs(8))
    add("uuid", "request_id=%s trace=%s" % (uuid.UUID(int=R.getrandbits(128)), uuid.UUID(int=R.getrandbits(128))))
    add("uuid json", '{"id": "%s", "session_id": "%s"}' % (uuid.UUID(int=R.getrandbits(128)), uuid.UUID(int=R.getrandbits(128))))
    add("semver", "Successfully installed requests-2.32.3 urllib3-2.2.1 certifi-2024.6.2")
    add("semver", "version: v2.0.0-rc.1+build.5, previous 1.2.3")
    add("base64 text", base64.b64encode(b"Hello, world! This is an ordinary sentence.").decode())
    add("base64 json no dots", base64.b64encode(json.dumps({"name": "demo", "tags": ["a"]}).encode()).decode())
    add("sha256", "%s  dist/app.tar.gz" % hashlib.sha256(b"x").hexdigest())
    add("sha512", "sha512sum: %s" % hashlib.sha512(b"y").hexdigest())
    for i in range(3):
        add("npm integrity", '"node_modules/pkg%d": {"version": "1.0.%d", "resolved": "https://registry.npmjs.org/pkg/-/pkg-1.0.%d.tgz", "integrity": "sha512-%s"}' % (i, i, i, b64(64)))
    add("poetry lock", 'files = [\n    {file = "six-1.16.0.tar.gz", hash = "sha256:%s"},\n]' % hexs(64))
    add("uv lock", 'sdist = { url = "https://files.pythonhosted.org/packages/x.tar.gz", hash = "sha256:%s", size = 7282 }' % hexs(64))
    add("requirements hash", "requests==2.32.3 \\\n    --hash=sha256:%s \\\n    --hash=sha256:%s" % (hexs(64), hexs(64)))
    add("paths", "Edited /home/dev/project/src/auth/token_store.py and ~/.config/app/secrets.example.yaml")
    add("paths", "Traceback (most recent call last):\n  File \"/usr/lib/python3.11/site-packages/jwt/api_jwt.py\", line 210, in decode")
    add("url", "See https://docs.github.com/en/authentication/keeping-your-account-and-data-secure/managing-your-personal-access-tokens")
    add("url", "GET https://api.example.com/v1/users?page=2&per_page=50 200 OK")
    add("url localhost", "Server running at http://localhost:3000/ and http://127.0.0.1:8080/api/@me")
    add("url port path", "https://example.com:8443/login?next=/account&email=jane@example.com")
    add("ssh url", "git clone ssh://git@github.com/acme/app.git && git clone git@gitlab.com:acme/tools.git")
    add("email", "Contact security@example.com or jane.doe+alerts@corp.example.org")
    add("prose", "Please reset your password using the link we sent.")
    add("prose", "The tokenizer splits tokens into subwords before counting them.")
    add("prose", "A password is required and the password is too short.")
    add("prose", "Rotate the token regularly and never commit secrets to git.")
    add("prose", "Use bearer authentication for the API; basic authentication is deprecated.")
    add("prose", "Authorization: required for all admin endpoints.")
    add("prose", "The cookie banner appears on first visit; cookies are cleared on logout.")
    add("prose", "Secret management is handled by Vault; see the secrets guide.")
    add("prose headings", "## Password reset\n## Token refresh\n## API key rotation")
    add("llm settings", "max_tokens: 4096\ntemperature: 0.2\ntop_p: 1")
    add("llm usage", '{"usage": {"input_tokens": 1532, "output_tokens": 210, "cache_read_input_tokens": 0}}')
    add("llm usage", '{"model": "claude", "max_tokens": 1024, "tokenizer": "cl100k_base", "token_count": 512}')
    add("settings", "password_min_length: 12\npassword_require_digit: true\ntoken_ttl_seconds: 3600")
    add("env counters", "MAX_TOKENS=8192\nTOKEN_COUNT=12\nPASSWORD_MIN_LENGTH=10")
    add("docker digest", "FROM python:3.12-slim@sha256:%s" % hexs(64))
    add("docker digest", "Digest: sha256:%s\nStatus: Downloaded newer image for node:20-alpine" % hexs(64))
    add("npm packages", "added 3 packages: @types/node@20.11.5, jsonwebtoken@9.0.2, @aws-sdk/client-s3@3.600.0")
    add("npm packages", "npm WARN deprecated request@2.88.2; npm_config_cache=/home/dev/.npm")
    add("npm test output", "> app@1.0.0 test\n> jest --coverage\n\nPASS src/auth.test.ts\nTests: 42 passed, 42 total")
    add("env dump", "PWD=/home/dev/project\nOLDPWD=/home/dev\nPATH=/usr/local/bin:/usr/bin\nSHELL=/bin/zsh")
    add("code from env", 'password = os.environ["DB_PASSWORD"]\ntoken = request.headers.get("X-Token")')
    add("code kwargs", "conn = psycopg.connect(host=host, user=user, password=password, dbname=name)")
    add("code attr", "secret = settings.secret_key\napi_key = config.api_key")
    add("type hints", "def login(username: str, password: str) -> Token:\n    token: Optional[str] = None")
    add("ts interface", "interface Creds {\n  password: string;\n  apiKey?: string;\n}")
    add("placeholders", "password: ${DB_PASSWORD}\ntoken: <your-token-here>\nsecret: \"***\"")
    add("gha", "env:\n  GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}\n  NPM_TOKEN: ${{ secrets.NPM_TOKEN }}")
    add("k8s", "env:\n  - name: DB_PASSWORD\n    valueFrom:\n      secretKeyRef:\n        name: db-secret\n        key: password")
    add("k8s kind", "apiVersion: v1\nkind: Secret\ntype: Opaque\nmetadata:\n  name: tls-cert")
    add("env empty", "API_KEY=\nSECRET_KEY=\n")
    add("hex color", "color: #ff5733; background: #1e1e1e;")
    add("region", "Deploying to ASIA-PACIFIC region ap-southeast-1 (ASIA)")
    add("css class", "<div class=\"task-list-item-checkbox disk-usage-indicator-2024\">")
    add("sklearn", "pip install scikit-learn==1.5.0 sk-video==1.1.10")
    add("pem public", "-----BEGIN PUBLIC KEY-----\n%s\n-----END PUBLIC KEY-----" % pick(AN, 64))
    add("pem cert", "-----BEGIN CERTIFICATE-----\n%s\n-----END CERTIFICATE-----" % pick(AN, 64))
    add("timestamps", "2024-06-07T12:34:56.789Z INFO request completed in 123ms status=200")
    add("ipv6", "listening on [::1]:8080 and 0.0.0.0:9090")
    add("jwt prose", "The JWT header is base64url encoded; eyJ is the prefix of an encoded JSON object.")
    add("slack prose", "Use the xoxb bot token from the Slack app settings page.")
    add("pytest output", "tests/test_auth.py::test_token_refresh PASSED\ntests/test_auth.py::test_password_reset PASSED")
    add("diff", "-    token_limit = 100\n+    token_limit = 200\n     password_hash = hash_password(raw)")
    add("cli help", "  --password PASSWORD   password for the database\n  --token-file PATH     read token from PATH")
    add("bearer prose", "Send the header as Authorization: Bearer <token>")
    add("cookie prose", "Set-Cookie: <name>=<value> is how servers send cookies")
    add("hash prose", "bcrypt password_hash column; pbkdf2 iterations=600000")
    add("git remote", "origin\thttps://github.com/acme/app.git (fetch)")
    add("uuid env", "SESSION_ID=%s" % uuid.UUID(int=R.getrandbits(128)))
    add("ordinary key-value", "timeout: 30\nretries: 5\nregion: us-east-1\nbucket: my-app-assets")
    add("getpass prompt", "def unix_getpass(prompt='Password: ', stream=None):")
    add("string concat", 'print("shlex: token=" + repr(raw))\nprint("Token: " + repr(tt))')
    add("arn", '"Resource": "arn:aws:secretsmanager:*:*:secret:AmazonSageMaker-*"')
    add("paginator", '"list_trials": {"input_token": "NextToken", "output_token": "NextToken", "limit_key": "MaxResults"}')
    add("pydantic", "class User(BaseModel):\n    username: str\n    password: SecretStr")
    add("markdown code", "* `npm profile set password`: Prompts for your password.")
    add("cfn map", '"AWS::ApiGateway::ApiKey": "%s",\n"AWS::IAM::AccessKey": "%s"' % (hexs(16), hexs(16)))
    add("enum constants", 'class Auth(str, Enum):\n    NOPASSWORD = "no-password-required"\n    PUBLIC_KEY_OR_PASSWORD = "PUBLIC_KEY_OR_PASSWORD"')
    add("constant names", "ACCESS_KEY = 'AWSAccessKeyId'\nSECRET_KEY = 'AWS_SECRET_ACCESS_KEY'\nTOKEN = 'aws_session_token'")
    add("kwargs", "backend.list_trials(NextToken=NextToken, MaxResults=MaxResults)\nconfirm(user, password=new_password)")
    add("annotations", "def send(self, context: RequestContext, task_token: TaskToken, **kwargs):")
    add("long word list", " ".join(R.choice(["alpha", "beta", "gamma", "tokenize", "password-less", "secretary"]) for _ in range(40)))
    return N


# --- secret formats: family -> (env var name, token maker) ----------------------------------
SHAPES = {
    "aws_access_key": ("AWS_ACCESS_KEY_ID", lambda: R.choice(["AKIA", "ASIA"]) + pick(UP, 16)),
    "github_pat": ("GITHUB_TOKEN", lambda: "ghp_" + pick(AN, 36)),
    "github_oauth": ("GH_OAUTH", lambda: "gho_" + pick(AN, 36)),
    "github_app": ("GH_APP_TOKEN", lambda: R.choice(["ghu_", "ghs_"]) + pick(AN, 36)),
    "github_fine_grained": ("GH_PAT", lambda: "github_pat_" + pick(AN, 22) + "_" + pick(AN, 59)),
    "gitlab_pat": ("GITLAB_TOKEN", lambda: "glpat-" + pick(URL, 20)),
    "gitlab_runner": ("RUNNER_TOKEN", lambda: "glrt-" + pick(URL, 20)),
    "gitlab_other": ("CI_DEPLOY", lambda: R.choice(["gldt-", "glft-", "glcbt-", "gloas-"]) + pick(URL, 24)),
    "slack_bot": ("SLACK_BOT_TOKEN", lambda: "xoxb-%s-%s-%s" % (pick(string.digits, 12), pick(string.digits, 13), pick(AN, 24))),
    "slack_user": ("SLACK_USER_TOKEN", lambda: "xoxp-%s-%s-%s-%s" % (pick(string.digits, 12), pick(string.digits, 12), pick(string.digits, 13), pick(HEX, 32))),
    "slack_app": ("SLACK_APP_TOKEN", lambda: "xapp-1-A%s-%s-%s" % (pick(UP, 10), pick(string.digits, 13), pick(HEX, 64))),
    "slack_webhook": ("SLACK_WEBHOOK", lambda: "https://hooks.slack.com/services/T%s/B%s/%s" % (pick(UP, 8), pick(UP, 10), pick(AN, 24))),
    "stripe_secret": ("STRIPE_KEY", lambda: R.choice(["sk_live_", "sk_test_", "rk_live_"]) + pick(AN, 40)),
    "openai_key": ("OPENAI_API_KEY", lambda: "sk-proj-" + pick(URL, 58) + "T3BlbkFJ" + pick(URL, 58)),
    "anthropic_key": ("ANTHROPIC_API_KEY", lambda: "sk-ant-api03-" + pick(URL, 93) + "AA"),
    "google_api_key": ("GOOGLE_API_KEY", lambda: "AIza" + pick(URL, 35)),
    "google_oauth": ("GOOGLE_ACCESS", lambda: "ya29." + pick(URL, 80)),
    "google_client_secret": ("GOOGLE_CLIENT", lambda: "GOCSPX-" + pick(URL, 28)),
    "npm_token": ("NPM_TOKEN", lambda: "npm_" + pick(AN, 36)),
    "pypi_token": ("PYPI_TOKEN", lambda: "pypi-AgEIcHlwaS5vcmc" + pick(URL, 70)),
    "jwt": ("ID_TOKEN", lambda: jwt({"sub": pick(string.digits, 10), "iat": 1717750000 + R.randrange(10**6)})),
    "age_key": ("AGE_KEY", lambda: "AGE-SECRET-KEY-1" + pick("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58)),
    "onepassword": ("OP_KEY", lambda: "A3-%s-%s-%s-%s-%s" % (pick(UP, 6), pick(UP, 11), pick(UP, 5), pick(UP, 5), pick(UP, 5))),
    "alibaba_key": ("ALIBABA_ID", lambda: "LTAI" + pick(AN, 20)),
    "artifactory": ("ART_KEY", lambda: "AKCp" + pick(AN, 69)),
    "azure_ad_secret": ("AZURE_CLIENT", lambda: pick(AN, 3) + R.choice(string.digits) + "Q~" + pick(AN + "_~.-", 34)),
    "clojars": ("CLOJARS", lambda: "CLOJARS_" + pick(LO, 60)),
    "databricks": ("DATABRICKS_HOST_CRED", lambda: "dapi" + pick(HEX, 32)),
    "digitalocean": ("DO_PAT", lambda: R.choice(["dop_v1_", "doo_v1_", "dor_v1_"]) + pick(HEX, 64)),
    "doppler": ("DOPPLER", lambda: "dp.pt." + pick(AN, 43)),
    "dynatrace": ("DT_API", lambda: "dt0c01." + pick(UP, 24) + "." + pick(AN, 64)),
    "easypost": ("EASYPOST", lambda: R.choice(["EZAK", "EZTK"]) + pick(AN, 54)),
    "flyio": ("FLY_API", lambda: "fo1_" + pick(URL, 43)),
    "grafana": ("GRAFANA", lambda: R.choice(["glc_" + pick(AN, 48), "glsa_" + pick(AN, 32) + "_" + pick(HEX, 8)])),
    "terraform": ("TFE", lambda: pick(LO, 14) + ".atlasv1." + pick(URL, 67)),
    "heroku": ("HEROKU", lambda: "HRKU-AA" + pick(URL, 58)),
    "huggingface": ("HF_TOKEN", lambda: "hf_" + pick(string.ascii_letters, 34)),
    "linear": ("LINEAR", lambda: "lin_api_" + pick(AN, 40)),
    "teams_webhook": ("TEAMS_HOOK", lambda: "https://acme.webhook.office.com/webhookb2/%s@%s/IncomingWebhook/%s/%s" % (uuid.UUID(int=R.getrandbits(128)), uuid.UUID(int=R.getrandbits(128)), pick(HEX, 32), uuid.UUID(int=R.getrandbits(128)))),
    "discord_webhook": ("DISCORD_HOOK", lambda: "https://discord.com/api/webhooks/%s/%s" % (pick(string.digits, 18), pick(URL, 68))),
    "notion": ("NOTION", lambda: "ntn_" + pick(string.digits, 11) + pick(AN, 35)),
    "openshift": ("OC_TOKEN", lambda: "sha256~" + pick(URL, 43)),
    "perplexity": ("PPLX", lambda: "pplx-" + pick(AN, 48)),
    "planetscale": ("PSCALE", lambda: R.choice(["pscale_tkn_", "pscale_pw_", "pscale_oauth_"]) + pick(URL, 43)),
    "postman": ("POSTMAN", lambda: "PMAK-" + pick(HEX, 24) + "-" + pick(HEX, 34)),
    "prefect": ("PREFECT", lambda: "pnu_" + pick(AN, 36)),
    "pulumi": ("PULUMI", lambda: "pul-" + pick(HEX, 40)),
    "rubygems": ("GEM_HOST", lambda: "rubygems_" + pick(HEX, 48)),
    "sendgrid": ("SENDGRID", lambda: "SG." + pick(URL, 22) + "." + pick(URL, 43)),
    "sendinblue": ("BREVO", lambda: "xkeysib-" + pick(HEX, 64) + "-" + pick(AN, 16)),
    "sentry": ("SENTRY_AUTH", lambda: "sntryu_" + pick(HEX, 64)),
    "shippo": ("SHIPPO", lambda: "shippo_live_" + pick(HEX, 40)),
    "shopify": ("SHOPIFY", lambda: R.choice(["shpat_", "shpca_", "shppa_", "shpss_"]) + pick(HEX, 32)),
    "sourcegraph": ("SRC_TOKEN", lambda: "sgp_" + pick(HEX, 16) + "_" + pick(HEX, 40)),
    "square": ("SQUARE", lambda: "sq0atp-" + pick(URL, 22)),
    "vault": ("VAULT_TOK", lambda: "hvs." + pick(URL, 95)),
    "docker_pat": ("DOCKER_PAT", lambda: "dckr_pat_" + pick(URL, 27)),
    "mailgun": ("MAILGUN", lambda: "key-" + pick(HEX, 32)),
    "groq": ("GROQ", lambda: "gsk_" + pick(AN, 52)),
    "replicate": ("REPLICATE", lambda: "r8_" + pick(AN, 37)),
    "huggingface_org": ("HF_ORG", lambda: "api_org_" + pick(string.ascii_letters, 34)),
    "readme": ("README_KEY", lambda: "rdme_" + pick(LO, 70)),
    "duffel": ("DUFFEL", lambda: "duffel_test_" + pick(URL, 43)),
}

SHAPE_SETTINGS = (
    ("command", lambda n, t: "export %s=%s && ./deploy.sh" % (n, t)),
    ("command", lambda n, t: "curl -sS -H 'X-Client: ci' https://api.example.com/v1 -d 'k=%s'" % t),
    ("error", lambda n, t: "Error: 401 Unauthorized: credential %s was revoked (request id %s)" % (t, uuid.UUID(int=R.getrandbits(128)))),
    ("prose", lambda n, t: "I pasted %s into the chat by mistake; rotate it today." % t),
    ("json", lambda n, t: json.dumps({"tool_response": {"stdout": json.dumps({"env": {n.lower(): t}})}})),
)


def positives():
    P = []

    def add(family, where, text, secret):
        assert secret in text, (family, text)
        P.append({"family": family, "where": where, "text": text, "secret": secret})

    for family, (name, make) in sorted(SHAPES.items()):
        for where, render in SHAPE_SETTINGS:
            t = make()
            add(family, where, render(name, t), t)
    # private keys (the body line is what must disappear)
    for label in ("RSA PRIVATE KEY", "EC PRIVATE KEY", "OPENSSH PRIVATE KEY", "PRIVATE KEY",
                  "ENCRYPTED PRIVATE KEY", "DSA PRIVATE KEY", "PGP PRIVATE KEY BLOCK"):
        key = pem(label)
        add("private_key", "command", "$ cat ~/.ssh/id_key\n%s\n$ ls" % key, key.split("\n")[2])
    key = pem("RSA PRIVATE KEY")
    add("private_key", "json", json.dumps({"file": "key.pem", "content": key}), key.split("\n")[3])
    # command-line credentials
    pw = lambda: pick(AN, 10) + R.choice("!#%+") + pick(string.digits, 2)
    for cmd in ("mysql -u root -p{p} -h db.internal app", "mysqldump -uadmin -p{p} shop > dump.sql",
                "mariadb --user=app --password={p} -e 'select 1'",
                "sshpass -p '{p}' ssh deploy@10.0.0.5 uptime",
                "sshpass -p {p} scp build.tgz deploy@host:/srv",
                "docker login -u ci-bot -p {p} registry.example.com",
                "docker login --username ci --password {p} ghcr.io",
                "podman login -u me -p {p} quay.io", "curl -u admin:{p} https://jenkins.local/api/json",
                "curl --user 'deploy:{p}' -X POST https://nexus.local/upload",
                "wget --user=bot --password={p} https://files.local/a.tgz",
                "psql \"postgresql://app:{p}@db:5432/app\" -c 'select 1'",
                "redis-cli -h cache -a {p} ping", "ldapsearch -x -D cn=admin -w {p} -b dc=ex",
                "keytool -importcert -keystore ks.jks -storepass {p} -file ca.pem",
                "openssl pkcs12 -export -in c.pem -passout pass:{p} -out c.p12",
                "zip -P {p} -r secrets.zip conf/", "7z a -p{p} backup.7z data/",
                "smbclient //nas/share -U backup%{p} -c ls",
                "az login --service-principal -u app -p {p} --tenant t",
                "mongosh -u admin -p {p} --authenticationDatabase admin",
                "helm registry login reg.io -u me --password {p}",
                "./manage.py createsuperuser --password {p} --noinput",
                "vault login -method=userpass username=ops password={p}",
                "gh secret set DB_PASS --body x --token {p}"):
        p = pw()
        add("cli_password", "command", cmd.format(p=p), p)
    for _ in range(4):
        t = "npm_" + pick(AN, 36)
        add("npmrc", "command", "npm config set //registry.npmjs.org/:_authToken=%s" % t, t)
    for fmt in ("//npm.corp.example/:_authToken=%s", "//npm.corp.example/:_password=%s",
                "_auth=%s\nalways-auth=true"):
        t = base64.b64encode(rbytes(18)).decode()
        add("npmrc", "config", fmt % t, t)
    # connection strings
    for fmt in ("DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={k};EndpointSuffix=core.windows.net",
                "Endpoint=sb://acme.servicebus.windows.net/;SharedAccessKeyName=root;SharedAccessKey={k}",
                "BlobEndpoint=https://acme.blob.core.windows.net/;SharedAccessSignature=sv=2022-11-02&ss=b&sig={k}"):
        for where in ("config", "error"):
            k = base64.b64encode(rbytes(32)).decode()
            text = fmt.format(k=k) if where == "config" else "Connection failed for '%s': timeout" % fmt.format(k=k)
            add("connection_string", where, text, k)
    for fmt in ("Server=db;Database=app;User Id=sa;Password={p};", "Data Source=x;Uid=app;Pwd={p};",
                "mongodb+srv://svc:{p}@cluster0.ab1cd.mongodb.net/app",
                "redis://:{p}@cache.internal:6379/0", "amqp://guest:{p}@rabbit:5672/",
                "jdbc:postgresql://db/app?user=app&password={p}"):
        p = pw()
        add("connection_string", "config", fmt.format(p=p), p)
    # labelled values: .env, YAML, headers, issuer-named keys
    for name in ("DB_PASSWORD", "SECRET_KEY", "JWT_SECRET", "API_TOKEN", "SMTP_PASS",
                 "REDIS_PASSWORD", "ENCRYPTION_KEY", "SIGNING_KEY"):
        v = pick(AN, 28)
        add("env_secret", "config", "%s=%s" % (name, v), v)
    for name in ("TWITTER_CONSUMER_SECRET", "MAPBOX_ACCESS_TOKEN", "DATADOG_API_KEY",
                 "SENTRY_AUTH_TOKEN", "cloudflare_api_key", "algolia.admin_key",
                 "mailchimp_key", "okta_client_secret", "twilio_auth_token", "heroku_api_key"):
        v = pick(AN, 30) + pick(string.digits, 2)
        add("issuer_label", "config", "%s: %s" % (name, v) if "." in name or name.islower()
            else "%s=%s" % (name, v), v)
    for header in ("Authorization: Bearer %s", "Authorization: token %s", "X-Api-Key: %s",
                   "PRIVATE-TOKEN: %s", "X-Auth-Token: %s", "Proxy-Authorization: Basic %s"):
        v = pick(AN, 32) + "9"
        if "Basic" in header:
            v = base64.b64encode(("user:" + pick(AN, 12)).encode()).decode()
        add("header", "command", "curl -H '%s' https://api.example.com/v2/items" % (header % v), v)
    for fmt in ("the password is {p} for the staging db", "Password was reset to {p}, tell nobody",
                "use passphrase {p}", "My passcode is {p}.", "the api key is {p}"):
        p = pw()
        add("prose_password", "prose", fmt.format(p=p), p)
    for fmt in ("database:\n  user: app\n  password: \"{p}\"\n", "spring.datasource.password={p}",
                "[client]\npassword = {p}\n", '{{"username": "bob", "password": "{p}"}}'):
        p = pw()
        add("config_password", "config", fmt.format(p=p), p)
    for _ in range(3):
        v = pick(AN, 40)
        add("json_embedded", "json", json.dumps({"output": json.dumps({"access_token": v, "expires_in": 3600})}), v)
    # written after the rules as a held-out check (17/20 redacted then; the 3 misses were fixed)
    for where, fmt in (("command", "PGPASSWORD=%s psql -h db -U app"),
                       ("command", "curl -H \"X-API-KEY: %s\" https://api.example.com"),
                       ("config", "smtp:\n  host: mail\n  pass: %s\n"),
                       ("json", '{"client_secret": "%s"}'), ("config", "[db]\nuser=app\npasswd=%s"),
                       ("command", "export TF_VAR_db_password=%s"),
                       ("config", "ftp://admin:%s@files.example.com/"),
                       ("command", "htpasswd -b .htpasswd admin %s"), ("prose", "Your new API key: %s"),
                       ("command", "mysql --user=root --password='%s' app"),
                       ("error", "Set-Cookie: session=%s; HttpOnly"),
                       ("command", "kubectl create secret generic x --from-literal=password=%s"),
                       ("command", "docker run -e POSTGRES_PASSWORD=%s postgres"),
                       ("config", "client = Client(api_key='%s')"),
                       ("config", "jdbc:mysql://db:3306/app?user=root&password=%s"),
                       ("error", "Authorization: Bearer %s"), ("prose", "the token for staging is %s"),
                       ("command", "git clone https://x-access-token:%s@github.com/acme/app")):
        v = pick(AN, 24) + R.choice("!#%") + pick(string.digits, 3)
        add("held_out", where, fmt % v, v)
    # credential files (issue #25): .netrc, .pgpass, PuTTY keys, password hashes, attributes
    cw = lambda: pick(AN, 12) + R.choice("!#%+_") + pick(string.digits, 2)
    for fmt in ("machine api.example.com login deploy password {p}",
                "machine git.example.org\n  login ci\n  password {p}\n",
                "default login anonymous password {p}",
                "machine ftp.example.net password {p} login bob",
                "cat ~/.netrc\nmachine registry.example.com login u account a password {p}"):
        p = cw()
        add("netrc", "config", fmt.format(p=p), p)
    for fmt in ("db.internal:5432:appdb:appuser:{p}", "*:*:*:postgres:{p}",
                "echo 'localhost:6432:*:app:{p}' >> ~/.pgpass",
                "10.0.0.7:5432:orders:report_ro:{p}\n"):
        p = cw()
        add("pgpass", "config", fmt.format(p=p), p)
    for version in ("2", "3"):
        priv = pick(B64, 64)
        mac = pick(HEX, 64)
        ppk = ("PuTTY-User-Key-File-%s: ssh-rsa\nEncryption: none\nComment: rsa-key\n"
               "Public-Lines: 2\n%s\n%s\nPrivate-Lines: 2\n%s\n%s\nPrivate-MAC: %s"
               % (version, pick(B64, 64), pick(B64, 20), priv, pick(B64, 40), mac))
        add("putty_key", "config", ppk, priv)
        add("putty_key", "json", json.dumps({"file": "deploy.ppk", "content": ppk}), priv)
    for fmt in ("admin:$apr1${s}${h}", "deploy:$2y$05${s}{h}", "user:{{SHA}}{b}",
                "root:$6$rounds=5000${s}${h}:19000:0:99999:7:::"):
        salt, h, b = pick(AN + "./", 8), pick(AN + "./", 31), base64.b64encode(rbytes(20)).decode()
        text = fmt.format(s=salt, h=h, b=b)
        add("password_hash", "config", text, b if "SHA" in fmt else h)
    for fmt in ('<publishProfile userName="$app" userPWD="{p}" />',
                '<add name="db" connectionString="{p}" />', '<server id="x" password="{p}"/>',
                "signingConfigs {{ release {{ storePassword '{p}' }} }}",
                'keyPassword "{p}"', "define('DB_PASSWORD', '{p}');",
                "<Pass encoding=\"base64\">{p}</Pass>", "[Interface]\nPrivateKey = {p}=\n",
                "PresharedKey = {p}="):
        p = cw() if "PrivateKey" not in fmt and "Preshared" not in fmt else pick(B64, 43)
        add("credential_file", "config", fmt.format(p=p), p)
    return P


# --- look-alikes: must come out unchanged ----------------------------------------------------

def negatives():
    N = []

    def add(family, text):
        N.append({"family": family, "text": text})

    u = lambda: str(uuid.UUID(int=R.getrandbits(128)))
    for _ in range(12):
        sha = pick(HEX, 40)
        add("commit_sha", R.choice(["commit %s\nAuthor: Jane <jane@example.com>",
                                    "HEAD is now at %s fix: token refresh",
                                    "git cherry-pick %s", '{"sha": "%s", "message": "bump"}',
                                    "Merge %s into main", "git revert --no-edit %s"]) % sha)
    for _ in range(12):
        add("short_sha", "%s fix: %s" % (pick(HEX, R.choice([7, 8, 9, 12])),
                                         R.choice(["password reset flow", "token expiry", "api key rotation docs", "lint"])))
    for _ in range(25):
        add("uuid", R.choice(["request_id=%s", '{"id": "%s", "status": "ok"}', "SESSION_ID=%s",
                              "uid: %s", "trace %s failed", "x-request-id: %s",
                              "TOKEN_ID=%s", "session_token_id: %s"]) % u())
    for _ in range(20):
        maj, mi, pa = R.randrange(30), R.randrange(50), R.randrange(200)
        add("version", R.choice(["Successfully installed requests-%d.%d.%d",
                                 "npm install lodash@%d.%d.%d", "version: v%d.%d.%d-rc.1+build.5",
                                 "go: downloading golang.org/x/crypto v0.%d.%d-20240101120000-" + pick(HEX, 12),
                                 "FROM node:%d.%d.%d-alpine", "ruby %d.%d.%dp0"]).replace("%d.%d.%d", "%d.%d.%d" % (maj, mi, pa)).replace("v0.%d.%d", "v0.%d.%d" % (mi, pa)))
    for _ in range(20):
        add("npm_integrity", '"node_modules/%s": {"version": "1.%d.0", "integrity": "sha512-%s"}' % (
            pick(string.ascii_lowercase, 6), R.randrange(9), base64.b64encode(rbytes(64)).decode()))
    for _ in range(8):
        add("yarn_lock", '%s@^2.0.0:\n  version "2.1.0"\n  resolved "https://registry.yarnpkg.com/x/-/x-2.1.0.tgz#%s"\n  integrity sha1-%s' % (
            pick(string.ascii_lowercase, 5), pick(HEX, 40), base64.b64encode(rbytes(20)).decode()))
    for _ in range(8):
        add("poetry_lock", '{file = "pkg-1.0.tar.gz", hash = "sha256:%s"}' % pick(HEX, 64))
    for _ in range(8):
        add("go_sum", "github.com/acme/%s v1.%d.0 h1:%s" % (pick(string.ascii_lowercase, 6), R.randrange(9), base64.b64encode(rbytes(32)).decode()))
    for _ in range(6):
        add("cargo_lock", '[[package]]\nname = "serde"\nversion = "1.0.%d"\nchecksum = "%s"' % (R.randrange(200), pick(HEX, 64)))
    for _ in range(6):
        add("pip_hash", "requests==2.32.3 --hash=sha256:%s" % pick(HEX, 64))
    for _ in range(20):
        kind = R.choice(["png", "jpeg", "gif", "webp"])
        add("base64_image", R.choice(['<img src="data:image/%s;base64,%s">', '{"image": "data:image/%s;base64,%s"}',
                                      "background: url(data:image/%s;base64,%s);"]) % (kind, base64.b64encode(rbytes(R.randrange(60, 300))).decode()))
    for _ in range(10):
        add("base64_blob", base64.b64encode(rbytes(R.randrange(30, 120))).decode())
    for _ in range(12):
        add("digest", R.choice(["FROM python:3.12-slim@sha256:%s", "Digest: sha256:%s", "%s  dist/app.tar.gz",
                                "sha256sum: %s"]) % pick(HEX, 64))
    for _ in range(8):
        add("md5", "md5: %s  file.bin" % pick(HEX, 32))
    for _ in range(10):
        add("container_id", R.choice(["docker rm -f %s", "CONTAINER ID %s", "container %s exited (1)"]) % pick(HEX, R.choice([12, 64])))
    ids = [lambda: "i-0" + pick(HEX, 16), lambda: "ami-0" + pick(HEX, 16), lambda: "vpc-" + pick(HEX, 17),
           lambda: "sg-0" + pick(HEX, 16), lambda: "cus_" + pick(AN, 14), lambda: "pi_" + pick(AN, 24),
           lambda: "ch_" + pick(AN, 24), lambda: "aha_20261124T093000Z_" + pick(HEX, 6),
           lambda: "C0" + pick(UP, 9), lambda: "MDQ6VXNlcj" + pick(AN, 6) + "=",
           lambda: "arn:aws:iam::%s:role/deploy" % pick(string.digits, 12),
           lambda: "projects/%s/locations/us/keyRings/kr" % pick(LO, 10),
           lambda: pick(HEX, 32), lambda: "Qm" + pick(AN, 44), lambda: "evt_" + pick(AN, 24),
           lambda: "run-" + pick(string.digits, 10), lambda: "PR #%d" % R.randrange(9999),
           lambda: "job/%s" % pick(string.digits, 11), lambda: "ws_" + pick(LO, 12),
           lambda: "price_" + pick(AN, 24)]
    for i in range(40):
        add("id", R.choice(["id=%s", "created %s", '{"ref": "%s"}', "see %s in the console"]) % ids[i % len(ids)]())
    for text in ("docker run -p 8080:80 nginx", "ssh -p 2222 deploy@host", "psql -h db -p 5432 -U app",
                 "mysql -u root -p", "mysql -h db -P 3306 -u app -p app_db",
                 "echo \"$CR_PAT\" | docker login ghcr.io -u me --password-stdin",
                 "gh auth login --with-token < token.txt", "./cli --token-file ~/.config/cli/token",
                 "TOKEN=$(cat ~/.secrets/token)", "export API_KEY=<your-key-here>",
                 "password: ${{ secrets.DB_PASSWORD }}", "curl -u \"$USER:$PASS\" https://x.local",
                 "redis-cli -a \"$REDIS_PASSWORD\" ping", "--password PASSWORD   the database password",
                 "psql --no-password -d app", "mysql --password -u app", "git push --force-with-lease origin feature",
                 "pip install --index-url https://pypi.org/simple pkg", "ssh-keygen -t ed25519 -N '' -f key",
                 "kubectl create secret generic db --from-literal=password=$DB_PASS",
                 "export PGPASSWORD=\"$(vault kv get -field=pw secret/db)\"",
                 "az login --identity", "docker login -u me registry.local", "npm login --scope=@acme",
                 "zip -r out.zip dir/", "7z x archive.7z -o/tmp/x", "sshpass -f ~/.pw ssh host",
                 "keytool -list -keystore ks.jks", "openssl rand -hex 16", "ldapsearch -x -b dc=example,dc=com",
                 "max_tokens=4096 temperature=0.2", "password_min_length: 12", "token_count: 512",
                 "the password is required", "Your token was rejected; run `gh auth refresh`.",
                 "Rotate the API key every 90 days.", "Set the secret in the CI settings page.",
                 "the token is invalid or expired", "passcode length is 6 digits",
                 "Authorization: Bearer <token>", "X-Api-Key: ${API_KEY}", "sk-learn is not a package name",
                 "Use the xoxb bot token from the app page.", "key-value store", "ghp_ tokens start with ghp_",
                 "AKIA prefix marks long-term keys", "The JWT starts with eyJ",
                 "curl -fsSL https://example.com/install.sh -o install.sh",
                 "npm WARN deprecated request@2.88.2", "tests/test_auth.py::test_password_reset PASSED",
                 "def login(username: str, password: str) -> Token:",
                 "conn = connect(host=h, user=u, password=password)",
                 "env:\n  GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}",
                 "Server=db;Database=app;Integrated Security=true;",
                 "mongodb://localhost:27017/app", "redis://cache:6379/0",
                 "https://user@example.com/path", "git@github.com:acme/app.git",
                 "AccountName=acme;EndpointSuffix=core.windows.net",
                 "forms such as `-pSECRET` for mysql/mariadb/7z, `sshpass -p`,",
                 "`docker login -p`, `curl -u user:pass`, `redis-cli -a`, `ldapsearch -w`,",
                 "`openssl -passin pass:`), npm `_authToken`/`_auth`/`_password`",
                 "pip install requests==2.31.0", "the password field is required",
                 "token budget: 4096", "ssh -i ~/.ssh/id_ed25519 -p 22 git@host",
                 "export PATH=$HOME/bin:$PATH", "curl -u \"$GH_USER:$GH_TOKEN\" https://api.github.com",
                 "bypass: enabled", "tests pass: 12 of 12", "htpasswd -c .htpasswd admin",
                 # credential-file look-alikes (issue #25)
                 "machine learning login page: the password reset flow is broken",
                 "the machine has no login shell", "default login shell is /bin/zsh",
                 "connect to db.internal:5432:appdb as usual", "localhost:5432",
                 "PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin",
                 "MAC 00:1a:2b:3c:4d:5e on eth0", "fe80::1:2:3:4 is link-local",
                 "at 12:30:45:00:01 the job ran", "ffmpeg -ss 00:01:02:03 -i in.mp4",
                 "password: Option<String>,", "password: Vec<u8>,",
                 "PuTTY-User-Key-File-3 is the format puttygen writes",
                 "convert it with puttygen key.ppk -O private-openssh -o id_rsa",
                 "storePassword = System.getenv('STORE_PASSWORD')",
                 "the price is $1 or $5 each", "echo $1$2$3",
                 "NOPASSWORD = \"no-password-required\"",
                 '<input type="password" name="password" />',
                 "define('WP_DEBUG', true);", "keyPassword = keystoreProperties['keyPassword']"):
        add("credential_words", text)
    for _ in range(10):
        add("timestamp", "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ INFO done in %dms" % (
            R.randrange(2000, 2030), R.randrange(1, 13), R.randrange(1, 29), R.randrange(24),
            R.randrange(60), R.randrange(60), R.randrange(1000), R.randrange(5000)))
    for _ in range(10):
        add("hash_words", "%s %s" % (hashlib.sha1(rbytes(8)).hexdigest(), R.choice(["tree", "blob", "parent"])))
    return N


if __name__ == "__main__":
    data = {"positives": classic_positives() + positives(),
            "negatives": classic_negatives() + negatives()}
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus.json")
    with open(out, "w") as fh:
        json.dump(data, fh, indent=1)
        fh.write("\n")
    fams = {p["family"] for p in data["positives"]}
    print("wrote %d positives in %d formats, %d negatives" % (len(data["positives"]), len(fams), len(data["negatives"])))
