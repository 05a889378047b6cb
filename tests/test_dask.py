"""`--backend dask`: the same runs on a Dask cluster, their results back in
the run store; a missing Dask is a clear error, not a traceback."""

import json
import sys
from pathlib import Path

import pytest
from distributed import LocalCluster

import netreturn
from netreturn import cli
from netreturn.runner import RunSpec, run_many


@pytest.fixture(scope="module")
def local_cluster():
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as c:
        yield c


@pytest.fixture(scope="module")
def scheduler(local_cluster):
    return local_cluster.scheduler_address


def _numbers(results):
    # json.dumps spells NaN and floats exactly: equal text means bit-equal numbers.
    return [json.dumps({k: r[k] for k in ("seed", "params", "summary", "flows", "udp", "ifaces")}, sort_keys=True)
            for r in results]


def test_a_sweep_on_a_dask_cluster_gives_the_local_backends_results(tmp_path, small, scheduler):
    kw = dict(set=small, sweep={"queue": ["droptail", "ewt"]}, seeds=2)
    local = netreturn.run("ewt/scenario2", jobs=1, **kw)
    remote = netreturn.run("ewt/scenario2", backend="dask", scheduler=scheduler, out=tmp_path / "d", **kw)
    assert len(remote.raw) == 4
    assert _numbers(remote.raw) == _numbers(local.raw)
    assert remote.table() == local.table()


def test_a_cluster_object_is_taken_as_the_scheduler_as_a_batch_clusters_is_and_the_dashboard_is_printed(
        tmp_path, small, local_cluster, capsys):
    """dask-jobqueue's SLURMCluster is passed the same way (README, cluster.py)."""
    kw = dict(set=small, sweep={"queue": ["droptail", "ewt"]}, seeds=1)
    local = netreturn.run("ewt/scenario2", jobs=1, **kw)
    remote = netreturn.run("ewt/scenario2", backend="dask", scheduler=local_cluster, out=tmp_path, **kw)
    assert _numbers(remote.raw) == _numbers(local.raw)
    err = capsys.readouterr().err
    assert "2 run(s) on 2 Dask worker(s)" in err
    assert f"dashboard: {local_cluster.dashboard_link}" in err


def test_workers_of_another_simulator_build_are_refused_naming_both_builds(tmp_path, small, scheduler, monkeypatch):
    """Same crate version, other build: the check is by the build hash that
    `netreturn --version` prints, not by the version."""
    from netreturn import cluster
    from netreturn.task import native_build_id

    theirs = native_build_id()  # the workers' processes hash their own module
    monkeypatch.setattr(cluster, "native_build_id", lambda: "0123456789abcdef")
    with pytest.raises(cluster.BackendError) as e:
        netreturn.run("ewt/scenario2", set=small, seed=1, backend="dask", scheduler=scheduler, out=tmp_path)
    assert "another simulator build than this client's (0123456789abcdef" in str(e.value)
    assert f"has {theirs}" in str(e.value)
    assert not list((tmp_path / "runs").glob("*.json"))


def test_results_from_the_cluster_land_in_the_run_store_and_a_rerun_resumes_locally(tmp_path, small, scheduler):
    specs = [RunSpec.make("ewt/scenario2", {**small, "queue": "awm"}, s) for s in (1, 2, 3)]
    ran = []
    run_many(specs, out=tmp_path, progress=False, backend="dask", scheduler=scheduler,
             on_result=lambda s, r: ran.append(s.seed))
    assert sorted(ran) == [1, 2, 3]
    assert {p.stem for p in (tmp_path / "runs").glob("*.json")} == {s.key() for s in specs}
    ran.clear()
    again = run_many(specs, jobs=1, out=tmp_path, progress=False, on_result=lambda s, r: ran.append(s.seed))
    assert ran == [] and [r["seed"] for r in again] == [1, 2, 3]


def test_the_workers_run_the_clients_scenario_text_not_their_own_file(tmp_path, small):
    """A worker on another machine may lack the file or hold another version
    of it: the text the client read is what runs."""
    from netreturn import cluster

    spec = RunSpec.make("ewt/scenario2", {**small, "queue": "droptail"}, 1)
    text = Path(spec.scenario).read_text()
    want = json.dumps(cluster.execute_with_text(spec, text)["summary"])
    theirs = tmp_path / "worker" / "scenario2.toml"
    moved = spec.__class__(str(theirs), spec.overrides, spec.seed)
    assert json.dumps(cluster.execute_with_text(moved, text)["summary"]) == want  # no file there
    theirs.parent.mkdir()
    theirs.write_text(text.replace('udp_rate = "13.35Mbps"', 'udp_rate = "1Mbps"'))
    r = cluster.execute_with_text(moved, text)  # another version there
    assert r["scenario"] == str(theirs)
    assert json.dumps(r["summary"]) == want


def test_a_missing_dask_is_a_clear_error_naming_the_install_command(tmp_path, capsys, small, monkeypatch):
    # What importing dask.distributed does where Dask is not installed.
    monkeypatch.setitem(sys.modules, "dask", None)
    monkeypatch.setitem(sys.modules, "dask.distributed", None)
    rc = cli.main(
        [
            "run",
            "ewt/scenario2",
            "--set",
            f"flows={small['flows']}",
            "--set",
            f"file_bytes={small['file_bytes']}",
            "--seeds",
            "2",
            "--backend",
            "dask",
            "--no-plots",
            "--out",
            str(tmp_path),
            "-q",
        ]
    )
    err = capsys.readouterr().err
    assert rc == 2
    assert "Dask" in err and "pip install" in err and "[dask]" in err
    assert "Traceback" not in err


def test_an_unreachable_scheduler_is_a_clear_error(tmp_path, capsys, small, monkeypatch):
    from netreturn import cluster

    monkeypatch.setattr(cluster, "CONNECT_TIMEOUT", "1s")
    rc = cli.main(["run", "ewt/scenario2", "--set", f"flows={small['flows']}", "--seed", "1", "--backend", "dask",
                   "--scheduler", "127.0.0.1:9", "--no-plots", "--out", str(tmp_path), "-q"])
    err = capsys.readouterr().err
    assert rc == 2 and "cannot reach the Dask scheduler at 127.0.0.1:9" in err
