"""Commands that change shared systems, as the safety screen reads them: who gets in, what runs.

Owns the judges of programs that grant access or run what they are given on a system others
share: a display opened to every host (``xhost +``), a container given the credential
folders (``docker run -v ~/.aws:…`` of an image that is neither official nor the
credential's own vendor's), cluster manifests from another host (``kubectl apply -f URL``),
administrator roles granted (AWS ``AdministratorAccess``, GCP ``roles/owner``, Azure
``Owner``, ``cluster-admin``) or a private repository made public, a chart repository over
plain http; and which commands print a platform's token, with the hosts it is meant for
(``gh auth token`` is GitHub's: sent to GitHub it is use, elsewhere it is a leak).
``effects`` calls ``HANDLERS`` beside ``programs.HANDLERS``. Imports ``programs`` and
``shell`` only.
"""

import re
from typing import Dict, List, Optional, Tuple

from .programs import CODE_HOSTS, Flags, Opts, credential, home_path, url_host
from .shell import Word

# the hosts a platform's token is for; a host below one of them counts too
TOKEN_HOSTS: Dict[str, Tuple[str, ...]] = {
    "gh": ("github.com", "githubusercontent.com", "ghcr.io"),
    "gcloud": ("googleapis.com", "google.com", "gcr.io", "pkg.dev"),
    "az": ("azure.com", "azure.net", "windows.net", "microsoft.com", "microsoftonline.com",
           "azurecr.io"),
    "aws": ("amazonaws.com", "aws.amazon.com"),
}
# images that may see a credential folder: the vendor's own CLI image
_VENDOR_IMAGES = {".aws": ("amazon/", "public.ecr.aws/aws-cli/"),
                  ".azure": ("mcr.microsoft.com/",),
                  "gcloud": ("google/cloud-sdk", "gcr.io/google.com/cloudsdktool/")}
_ADMIN = re.compile(r"(?:arn:aws:iam::aws:policy/)?(?:administratoraccess|iamfullaccess)|"
                    r"roles/(?:owner|editor|iam\.\w*admin\w*|resourcemanager\.\w*admin\w*)|"
                    r"owner|contributor|user access administrator|cluster-admin")
_LOCAL = re.compile(r"(?:localhost|127\.\d+\.\d+\.\d+|\[::1\]|[\w.-]+\.localhost)(?::\d+)?$")
_CONTAINER_OPTS = {"--volume", "--mount", "--env", "--workdir", "--publish", "--name",
                   "--network", "--net", "--user", "--entrypoint", "--env-file", "--label",
                   "--platform", "--hostname", "--add-host", "--cpus", "--memory", "--device",
                   "--cap-add", "--cap-drop", "--pull", "--restart", "--log-driver",
                   "--security-opt", "--ulimit", "--tmpfs", "--volumes-from", "--gpus",
                   "--shm-size", "--ipc", "--pid", "--expose"}


def token_source(prog: str, args: List[Word]) -> Optional[str]:
    """The platform whose token ``prog args`` prints (``gh auth token``, ``gcloud auth
    print-access-token``, ``az account get-access-token``, ``aws ecr get-login-password``)."""
    low = [a.lower() for a in args]
    pos = [a for a in low if not a.startswith("-")]
    if prog == "gh" and (pos[:2] == ["auth", "token"] or pos[:2] == ["auth", "status"] and (
            "-t" in low or "--show-token" in low)):
        return "gh"
    if prog == "gcloud" and "auth" in pos[:2] and any(p.startswith("print-") for p in pos):
        return "gcloud"
    if prog == "az" and pos[:2] == ["account", "get-access-token"]:
        return "az"
    if prog == "aws" and (pos[1:2] and pos[1].startswith("get-") and any(
            w in pos[1] for w in ("password", "token", "credentials")) or pos[:2] == [
            "configure", "get"] and "secret" in " ".join(pos[2:])):
        return "aws"
    return None


def sent_elsewhere(platform: str, hosts: List[str]) -> bool:
    """A token of ``platform`` sent to a host that is not its own (or to no URL at all)."""
    own = TOKEN_HOSTS.get(platform, ())
    return not hosts or any(not any(h == d or h.endswith("." + d) for d in own) for h in hosts)


def hosts_of(args: List[Word]) -> List[str]:
    """The hosts of the URLs among ``args``."""
    return [h for h in (url_host(a) for a in args if "://" in a) if h]


def applied(prog: str, args: List[Word]) -> List[str]:
    """What a command applies or runs as its definition: ``kubectl apply -f X`` (``-k``),
    ``gradle -I X`` (an init script), ``-b``/``--build-file``."""
    low = [a.lower() for a in args]
    if prog == "kubectl" and any(v in low[:4] for v in ("apply", "create", "replace")):
        o = Opts(args, "fk", {"--filename", "--kustomize"})
        return o.value("f", "--filename") + o.value("k", "--kustomize")
    if prog in ("gradle", "gradlew"):
        o = Opts(args, "Ibc", {"--init-script", "--build-file", "--settings-file"})
        return o.value("I", "--init-script") + o.value("b", "--build-file")
    return []


def foreign_url(target: str) -> bool:
    """A URL at a host that is not a code forge (a manifest or script from anywhere)."""
    host = url_host(target) if "://" in target else None
    return host is not None and host not in CODE_HOSTS


def _xhost(prog: str, args: List[Word], ctx: Flags, shown) -> None:
    """``xhost +``: the X server's access control off, every host may read the screen."""
    if "+" in args:
        ctx.flag("safety_bypass", shown)


def _container(prog: str, args: List[Word], ctx: Flags, shown) -> None:
    """``docker run`` mounting a credential folder into an image that is neither official
    (no namespace) nor the credential's vendor's own."""
    low = [a.lower() for a in args]
    verb = next((v for v in ("run", "create") if v in low[:2]), None)
    if verb is None:
        return
    o = Opts(args[low.index(verb) + 1:], "vewphlmu", _CONTAINER_OPTS)
    image = (o.pos[:1] or [""])[0].lower()
    sources = [v.split(":", 1)[0] for v in o.value("v", "--volume")] + [
        m.split("=", 1)[1] for v in o.value("", "--mount") for m in v.split(",")
        if m.startswith(("src=", "source="))]
    for source in sources:
        folder = (home_path(source) or source).rstrip("/").rsplit("/", 1)[-1]
        if credential(source) and "/" in image and not image.startswith(
                _VENDOR_IMAGES.get(folder, ("\0",))):
            ctx.flag("exfiltration", shown)


def _manifest(prog: str, args: List[Word], ctx: Flags, shown) -> None:
    """``kubectl create clusterrolebinding … --clusterrole=cluster-admin``."""
    low = [a.lower() for a in args]
    if "clusterrolebinding" in low[:3] and any(a.split("=")[-1] == "cluster-admin" for a in low):
        ctx.flag("privilege", shown)


def _grant(prog: str, args: List[Word], ctx: Flags, shown) -> None:
    """An administrator role granted (``aws iam attach-*-policy … AdministratorAccess``,
    ``gcloud … add-iam-policy-binding … roles/owner``, ``az role assignment create --role
    Owner``), a binding to everyone (``allUsers``), a private repository made public."""
    low = [a.lower() for a in args]
    pos = [a for a in low if not a.startswith("-")]
    values = [a.split("=", 1)[-1] for a in low]
    o = Opts(args, "", {"--role", "--visibility"})
    if prog == "aws" and pos[:1] == ["iam"] and pos[1:2] and pos[1].startswith(
            ("attach-", "put-")) and any(_ADMIN.fullmatch(v.rsplit("/", 1)[-1]) for v in values):
        ctx.flag("privilege", shown)
    if prog == "gcloud" and any(p.endswith("add-iam-policy-binding") for p in pos) and any(
            _ADMIN.fullmatch(v) or v.split(":")[-1] in ("allusers", "allauthenticatedusers")
            for v in values):
        ctx.flag("privilege", shown)
    if prog == "az" and pos[:3] == ["role", "assignment", "create"] and any(
            _ADMIN.fullmatch(v) for v in o.value("", "--role")):
        ctx.flag("privilege", shown)
    if prog == "gh" and pos[:2] == ["repo", "edit"] and "public" in o.value("", "--visibility"):
        ctx.flag("privilege", shown)


def _chart_repo(prog: str, args: List[Word], ctx: Flags, shown) -> None:
    """``helm repo add NAME http://<host>``: charts over plain http, anyone on the way may
    replace them (a repository at any https host is ordinary)."""
    low = [a.lower() for a in args if not a.startswith("-")]
    if low[:2] == ["repo", "add"] and any(
            a.startswith("http://") and not _LOCAL.match(a[7:].split("/", 1)[0])
            for a in low[2:]):
        ctx.flag("package_source", shown)


HANDLERS = {"xhost": _xhost, "docker": _container, "podman": _container, "nerdctl": _container,
            "kubectl": _manifest, "aws": _grant, "gcloud": _grant, "az": _grant, "gh": _grant,
            "helm": _chart_repo}
