"""The embedded Redis (``server.redis_embedded``): a real redis-server on a unix socket in a
folder of the test's own, started, joined, shared and stopped."""

from __future__ import annotations

import asyncio
import os
import shutil
import stat
import subprocess
import sys

import pytest
import redis.asyncio

from games.db.embedded import PROJECT_DIR
from games.db.pids import alive
from server.redis_embedded import EmbeddedRedisError, InUse, start_redis, status, stop_redis, stop_server

needs_redis = pytest.mark.skipif(shutil.which("redis-server") is None,
                                 reason="redis-server is not installed (apt-get install redis-server; ./dev does)")


@pytest.fixture
def folder(tmp_path):
    path = tmp_path / "redis"
    yield path
    stop_server(path, force=True)  # whatever the test left running


async def _ping(url: str) -> bool:
    client = redis.asyncio.Redis.from_url(url)
    try:
        return bool(await client.ping())
    finally:
        await client.aclose()


@needs_redis
async def test_start_ping_start_again_stop(folder) -> None:
    url = start_redis(folder)
    sock = folder / "redis.sock"
    assert url == f"unix://{sock}"
    assert await _ping(url)
    st = status(folder)
    assert st.running and st.pid and st.users == [os.getpid()] and not st.kept

    assert start_redis(folder) == url  # found running: joined, not started again
    assert status(folder).pid == st.pid and status(folder).users == [os.getpid()]

    # Only this user reaches it, and only through the socket; it keeps nothing on disk.
    assert stat.S_IMODE(sock.stat().st_mode) == 0o700
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    client = redis.asyncio.Redis.from_url(url, decode_responses=True)
    try:
        assert await client.config_get("port") == {"port": "0"}
        assert await client.config_get("save") == {"save": ""}
        assert await client.config_get("appendonly") == {"appendonly": "no"}
    finally:
        await client.aclose()

    assert stop_redis(folder) is True
    assert not alive(st.pid)
    assert not sock.exists()
    assert not status(folder).running
    assert stop_redis(folder) is False  # let go already


@needs_redis
def test_shared_until_the_last_user_lets_go(folder) -> None:
    """Another process joins: this one letting go leaves it running for the other, which
    stops it when it lets go in turn."""
    url = start_redis(folder)
    code = ("import sys; from pathlib import Path; from server.redis_embedded import start_redis, stop_redis; "
            "f = Path(sys.argv[1]); print(start_redis(f), flush=True); sys.stdin.read(); "
            "print(stop_redis(f), flush=True)")
    other = subprocess.Popen([sys.executable, "-c", code, str(folder)], cwd=PROJECT_DIR, text=True,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert other.stdout is not None and other.stdin is not None
        assert other.stdout.readline().strip() == url
        assert sorted(status(folder).users) == sorted([os.getpid(), other.pid])

        assert stop_redis(folder) is False  # the other still uses it
        assert asyncio.run(_ping(url))
        with pytest.raises(InUse):
            stop_server(folder)

        other.stdin.close()
        assert other.stdout.readline().strip() == "True"  # the last one out stopped it
        assert other.wait(10) == 0
    finally:
        if other.poll() is None:
            other.kill()
    assert not status(folder).running


@needs_redis
def test_a_user_killed_without_letting_go_is_dropped(folder) -> None:
    code = "import sys; from pathlib import Path; from server.redis_embedded import start_redis; " \
           "start_redis(Path(sys.argv[1]))"
    subprocess.run([sys.executable, "-c", code, str(folder)], cwd=PROJECT_DIR, check=True, timeout=30)
    st = status(folder)
    assert st.running and st.stale and not st.users  # it exited without stop_redis
    start_redis(folder)
    assert status(folder).users == [os.getpid()] and status(folder).pid == st.pid
    assert stop_redis(folder) is True


def test_not_installed(folder, monkeypatch) -> None:
    monkeypatch.setenv("PATH", str(folder.parent / "nothing-here"))
    with pytest.raises(EmbeddedRedisError, match="apt-get install redis-server, or set REDIS_URL"):
        start_redis(folder)


def test_a_folder_too_deep_for_a_unix_socket(tmp_path) -> None:
    deep = tmp_path.joinpath(*["a-rather-long-folder-name"] * 5)
    with pytest.raises(EmbeddedRedisError, match="CASINO_REDIS_DIR"):
        start_redis(deep)
    assert not deep.exists()


@needs_redis
def test_casino_redis_start_status_stop(folder) -> None:
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"} | {"CASINO_REDIS_DIR": str(folder)}

    def casino(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "server.cli", "redis", *args], cwd=PROJECT_DIR, env=env,
                              capture_output=True, text=True, timeout=30)

    assert casino("status").returncode == 3
    started = casino("start")
    assert started.returncode == 0 and "started" in started.stdout, started.stderr
    st = status(folder)
    assert st.running and st.kept  # it outlived the command that started it
    assert "kept running" in casino("status").stdout
    stopped = casino("stop")
    assert stopped.returncode == 0 and "stopped" in stopped.stdout, stopped.stderr
    assert not status(folder).running and not alive(st.pid or 0)
