"""Regenerate ``corpus.json``: fake, realistically shaped secrets and look-alikes.

Every token here is random (seeded for reproducibility) with the right prefix
and length; none is a real credential.  Run: ``python3 make_corpus.py``.
"""

import base64
import hashlib
import json
import os
import random
import string
import uuid

R = random.Random(20240607)
UP = string.ascii_uppercase + string.digits
AN = string.ascii_letters + string.digits
URL = AN + "-_"


def pick(chars, n):
    return "".join(R.choice(chars) for _ in range(n))


def b64u(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def jwt(payload):
    head = b64u(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    body = b64u(json.dumps(payload).encode())
    return "%s.%s.%s" % (head, body, b64u(bytes(R.randrange(256) for _ in range(32))))


def pem(label, lines=6):
    body = "\n".join(pick(AN + "+/", 64) for _ in range(lines))
    return "-----BEGIN %s-----\n%s\n-----END %s-----" % (label, body, label)


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


def positives():
    P = []

    def add(family, text, secret):
        assert secret in text, (family, text)
        P.append({"family": family, "text": text, "secret": secret})

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


def negatives():
    N = []

    def add(why, text):
        N.append({"why": why, "text": text})

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


if __name__ == "__main__":
    data = {"positives": positives(), "negatives": negatives()}
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus.json")
    with open(out, "w") as fh:
        json.dump(data, fh, indent=1)
        fh.write("\n")
    print("wrote %d positives, %d negatives" % (len(data["positives"]), len(data["negatives"])))
