//! Python bindings: convert scenarios in and results out; nothing else.

use netreturn_base::units;
use netreturn_base::Size;
use netreturn_control::{ControllerKind, QueueKind};
use netreturn_sim::metrics::RunResult;
use netreturn_sim::{Scenario, ScenarioError};
use netreturn_tcp::CcName;
use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use std::path::Path;

/// Large tables on huge pages ([`netreturn_sim::hugepages`]).
#[global_allocator]
static ALLOC: netreturn_sim::hugepages::HugePages = netreturn_sim::hugepages::HugePages;

create_exception!(_native, NativeScenarioError, PyValueError, "A scenario file or parameter is invalid.");

fn scenario_err(e: ScenarioError) -> PyErr {
    NativeScenarioError::new_err((e.to_string(), e.file, e.field, e.message))
}

fn load(path: &str, overrides: Vec<(String, String)>) -> PyResult<Scenario> {
    Scenario::from_file(Path::new(path), &overrides).map_err(scenario_err)
}

fn toml_to_py<'py>(py: Python<'py>, v: &toml::Value) -> PyResult<PyObject> {
    Ok(match v {
        toml::Value::String(s) => s.into_pyobject(py)?.into_any().unbind(),
        toml::Value::Integer(i) => i.into_pyobject(py)?.into_any().unbind(),
        toml::Value::Float(f) => f.into_pyobject(py)?.into_any().unbind(),
        toml::Value::Boolean(b) => b.into_pyobject(py)?.to_owned().into_any().unbind(),
        toml::Value::Datetime(d) => d.to_string().into_pyobject(py)?.into_any().unbind(),
        toml::Value::Array(a) => {
            let l = PyList::empty(py);
            for x in a {
                l.append(toml_to_py(py, x)?)?;
            }
            l.into_any().unbind()
        }
        toml::Value::Table(t) => {
            let d = PyDict::new(py);
            for (k, x) in t {
                d.set_item(k, toml_to_py(py, x)?)?;
            }
            d.into_any().unbind()
        }
    })
}

/// Validates a scenario and returns its description:
/// `{name, description, reference, params, seeds, paper}`.
#[pyfunction]
#[pyo3(signature = (path, overrides=vec![]))]
fn load_scenario(py: Python<'_>, path: &str, overrides: Vec<(String, String)>) -> PyResult<PyObject> {
    let s = load(path, overrides)?;
    // Building the topology and traffic catches errors serde cannot see
    // (unknown hosts, gateway parameters) before any run starts.
    let w = netreturn_sim::world::World::new(&s, 0)
        .map_err(|(field, message)| scenario_err(ScenarioError { file: path.to_string(), field, message }))?;
    let d = PyDict::new(py);
    // The link direction the headline describes (`Resolved::monitored`).
    d.set_item("monitored", w.rec.monitor.map(|m| w.ifaces[m as usize].name.clone()))?;
    d.set_item("name", &s.name)?;
    d.set_item("description", &s.description)?;
    d.set_item("reference", &s.reference)?;
    let params = PyDict::new(py);
    for (k, v) in &s.params {
        params.set_item(k, toml_to_py(py, v)?)?;
    }
    d.set_item("params", params)?;
    d.set_item("seeds", s.run.seeds)?;
    match &s.paper {
        Some(p) => d.set_item("paper", toml_to_py(py, p)?)?,
        None => d.set_item("paper", py.None())?,
    }
    d.set_item("file", &s.file)?;
    d.set_item("document", toml_to_py(py, &toml::Value::Table(s.document.clone()))?)?;
    Ok(d.into_any().unbind())
}

/// The scenario as it will run, resolved by the model both worlds share
/// (`netreturn_scenario::Resolved`): every link direction's rate, delay,
/// buffer in bytes, queue and controller with its parameters, and the
/// endpoints' TCP settings, as text.
#[pyfunction]
#[pyo3(signature = (path, overrides=vec![]))]
fn show_config(path: &str, overrides: Vec<(String, String)>) -> PyResult<String> {
    let s = load(path, overrides)?;
    let r = netreturn_sim::resolve::Resolved::new(&s).map_err(scenario_err)?;
    Ok(format!("scenario: {} ({})\n{r}", s.name, s.origin()))
}

/// The resolved model as data (`netreturn_scenario::Resolved`):
/// `{packet_bytes, bottleneck, monitored, links: [{name, field, from, to,
/// rate_bps, delay_ns, loss, method, queue, limit: (unit, n), buffer_bytes,
/// stage, controller, controller_config}], tcp: {cc, mss, rcv_buf, snd_buf,
/// ...}, text}`; link `2k + 1` is the reverse of link `2k`. Every world
/// reads these values; nothing in Python re-derives them.
#[pyfunction]
#[pyo3(signature = (path, overrides=vec![]))]
fn resolve(py: Python<'_>, path: &str, overrides: Vec<(String, String)>) -> PyResult<PyObject> {
    use netreturn_control::queue::Limit;
    let s = load(path, overrides)?;
    let r = netreturn_sim::resolve::Resolved::new(&s).map_err(scenario_err)?;
    let d = PyDict::new(py);
    d.set_item("packet_bytes", r.packet_bytes)?;
    let name = |i: Option<u32>| i.map(|i| r.links[i as usize].name.clone());
    d.set_item("bottleneck", name(r.topology.bottleneck))?;
    d.set_item("monitored", name(r.monitored))?;
    let links = PyList::empty(py);
    for l in &r.links {
        let x = PyDict::new(py);
        x.set_item("name", &l.name)?;
        x.set_item("field", &l.field)?;
        x.set_item("from", &r.topology.nodes[l.from as usize])?;
        x.set_item("to", &r.topology.nodes[l.to as usize])?;
        x.set_item("rate_bps", l.rate.bits_per_sec())?;
        x.set_item("delay_ns", l.delay.nanos())?;
        x.set_item("loss", l.loss)?;
        x.set_item("method", l.method.name())?;
        x.set_item("queue", l.queue.name())?;
        match l.limit {
            Limit::Bytes(b) => x.set_item("limit", ("bytes", b))?,
            Limit::Packets(p) => x.set_item("limit", ("packets", p as u64))?,
        }
        x.set_item("buffer_bytes", l.buffer_bytes)?;
        x.set_item("stage", l.stage().map(|k| k.name()))?;
        x.set_item("controller", l.controller().map(|k| k.name()))?;
        x.set_item("controller_config", l.gateway.as_ref().map(|g| format!("{g:?}")))?;
        links.append(x)?;
    }
    d.set_item("links", links)?;
    let t = PyDict::new(py);
    t.set_item("cc", r.tcp.cc.name().name())?;
    t.set_item("mss", r.tcp.mss)?;
    t.set_item("rcv_buf", r.tcp.rcv_buf)?;
    t.set_item("snd_buf", r.tcp.snd_buf)?;
    t.set_item("sack", r.tcp.sack)?;
    t.set_item("timestamps", r.tcp.timestamps)?;
    t.set_item("window_scaling", r.tcp.window_scaling)?;
    t.set_item("initial_cwnd", r.tcp.initial_cwnd)?;
    t.set_item("delayed_ack_count", r.tcp.delayed_ack_count)?;
    d.set_item("tcp", t)?;
    d.set_item("text", r.to_string())?;
    Ok(d.into_any().unbind())
}

/// Seconds from a time as scenario files write it ("80ms", 1.5).
#[pyfunction]
fn parse_time(py: Python<'_>, v: &Bound<'_, PyAny>) -> PyResult<f64> {
    Ok(quantity::<units::TimeQ>(py, v)?.0.secs_f64())
}

/// Bits per second from a rate ("45Mbps", 1e6).
#[pyfunction]
fn parse_rate(py: Python<'_>, v: &Bound<'_, PyAny>) -> PyResult<u64> {
    Ok(quantity::<units::RateQ>(py, v)?.0.bits_per_sec())
}

/// `("bytes", n)` or `("packets", n)` from a size ("97kB", "100p", 1500).
#[pyfunction]
fn parse_size(py: Python<'_>, v: &Bound<'_, PyAny>) -> PyResult<(&'static str, u64)> {
    Ok(match quantity::<units::SizeQ>(py, v)?.0 {
        Size::Bytes(b) => ("bytes", b),
        Size::Packets(p) => ("packets", p as u64),
    })
}

/// A Python str / int / float through the one unit parser
/// (`netreturn_base::units`), as a scenario value would go.
fn quantity<T: for<'de> serde::Deserialize<'de>>(_py: Python<'_>, v: &Bound<'_, PyAny>) -> PyResult<T> {
    let value = if v.is_instance_of::<pyo3::types::PyBool>() {
        return Err(PyValueError::new_err(format!("{v} is not a quantity")));
    } else if let Ok(i) = v.extract::<i64>() {
        toml::Value::Integer(i)
    } else if let Ok(f) = v.extract::<f64>() {
        toml::Value::Float(f)
    } else if let Ok(s) = v.extract::<String>() {
        toml::Value::String(s)
    } else {
        return Err(PyValueError::new_err(format!("{v} is not a quantity")));
    };
    value.try_into::<T>().map_err(|e| PyValueError::new_err(e.message().to_string()))
}

/// The registry: every queue discipline, window controller and congestion
/// control, with its name, its keys and where it comes from.
#[pyfunction]
fn mechanisms(py: Python<'_>) -> PyResult<PyObject> {
    let d = PyDict::new(py);
    let queues = PyList::empty(py);
    for &q in QueueKind::ALL {
        let x = PyDict::new(py);
        x.set_item("name", q.name())?;
        x.set_item("title", q.title())?;
        x.set_item("paper", q.paper())?;
        x.set_item("keys", q.keys().to_vec())?;
        x.set_item("table", q.table())?;
        queues.append(x)?;
    }
    d.set_item("queues", queues)?;
    let ctls = PyList::empty(py);
    for &c in ControllerKind::ALL {
        let x = PyDict::new(py);
        x.set_item("name", c.name())?;
        x.set_item("title", c.title())?;
        x.set_item("paper", c.paper())?;
        x.set_item("keys", c.keys().to_vec())?;
        x.set_item("needs_rate", c.needs_rate())?;
        ctls.append(x)?;
    }
    d.set_item("controllers", ctls)?;
    let ccs = PyList::empty(py);
    for &(_, name, what) in CcName::ALL {
        let x = PyDict::new(py);
        x.set_item("name", name)?;
        x.set_item("title", what)?;
        ccs.append(x)?;
    }
    d.set_item("congestion_controls", ccs)?;
    Ok(d.into_any().unbind())
}

fn columns<'py, T>(
    py: Python<'py>,
    rows: &[T],
    cols: &[(&str, &dyn Fn(&T) -> PyObject)],
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (name, f) in cols {
        let l = PyList::empty(py);
        for r in rows {
            l.append(f(r))?;
        }
        d.set_item(*name, l)?;
    }
    Ok(d)
}

fn result_to_py(py: Python<'_>, r: &RunResult) -> PyResult<PyObject> {
    let d = PyDict::new(py);
    d.set_item("seed", r.seed)?;
    let summary = PyDict::new(py);
    for (k, v) in &r.summary {
        summary.set_item(*k, *v)?;
    }
    d.set_item("summary", summary)?;
    d.set_item("monitor_link", r.monitor.clone())?;
    macro_rules! o {
        ($e:expr) => {
            $e.into_pyobject(py).unwrap().into_any().unbind()
        };
    }
    use netreturn_sim::metrics::{FlowRow, IfaceRow, UdpRow};
    let flows = columns::<FlowRow>(
        py,
        &r.flows,
        &[
            ("flow", &|x| o!(x.flow)),
            ("src", &|x| o!(x.src.clone())),
            ("dst", &|x| o!(x.dst.clone())),
            ("start_s", &|x| o!(x.start_s)),
            ("fct_s", &|x| o!(x.fct_s)),
            ("goodput_mbps", &|x| o!(x.goodput_mbps)),
            ("efficiency_pct", &|x| o!(x.efficiency_pct)),
            ("bytes_delivered", &|x| o!(x.bytes_delivered)),
            ("bytes_sent", &|x| o!(x.bytes_sent)),
            ("bytes_retransmitted", &|x| o!(x.bytes_retransmitted)),
            ("packets_lost", &|x| o!(x.packets_lost)),
            ("loss_pct", &|x| o!(x.loss_pct)),
            ("acks_lost", &|x| o!(x.acks_lost)),
            ("fast_retransmits", &|x| o!(x.fast_retransmits)),
            ("triple_dupacks", &|x| o!(x.triple_dupacks)),
            ("dupacks_past_threshold", &|x| o!(x.dupacks_past_threshold)),
            ("timeouts", &|x| o!(x.timeouts)),
            ("web", &|x| pyo3::types::PyBool::new(py, x.web).to_owned().into_any().unbind()),
        ],
    )?;
    d.set_item("flows", flows)?;
    let udp = columns::<UdpRow>(
        py,
        &r.udp,
        &[
            ("flow", &|x| o!(x.flow)),
            ("src", &|x| o!(x.src.clone())),
            ("dst", &|x| o!(x.dst.clone())),
            ("sent_packets", &|x| o!(x.sent_packets)),
            ("received_packets", &|x| o!(x.received_packets)),
            ("lost_packets", &|x| o!(x.lost_packets)),
            ("loss_pct", &|x| o!(x.loss_pct)),
            ("efficiency_pct", &|x| o!(x.efficiency_pct)),
            ("goodput_mbps", &|x| o!(x.goodput_mbps)),
        ],
    )?;
    d.set_item("udp", udp)?;
    let ifaces = columns::<IfaceRow>(
        py,
        &r.ifaces,
        &[
            ("iface", &|x| o!(x.name.clone())),
            ("utilization", &|x| o!(x.utilization)),
            ("tx_packets", &|x| o!(x.tx_packets)),
            ("queue_drops", &|x| o!(x.queue_drops)),
            ("loss_drops", &|x| o!(x.loss_drops)),
            ("queue_mean_bytes", &|x| o!(x.queue_mean_bytes)),
            ("queue_std_bytes", &|x| o!(x.queue_std_bytes)),
            ("queue_max_bytes", &|x| o!(x.queue_max_bytes)),
            ("robustness_index", &|x| o!(x.robustness_index)),
            ("acks_rewritten", &|x| o!(x.acks_rewritten)),
            ("loss_pct", &|x| o!(x.loss_pct)),
        ],
    )?;
    d.set_item("ifaces", ifaces)?;
    let q = PyDict::new(py);
    q.set_item("time_s", r.queue_series.0.clone())?;
    q.set_item("bytes", r.queue_series.1.clone())?;
    q.set_item("avail_mbps", r.avail_mbps.clone())?;
    d.set_item("queue_series", q)?;
    let traces = PyList::empty(py);
    for t in &r.traces {
        let x = PyDict::new(py);
        x.set_item("flow", t.flow)?;
        x.set_item("time_s", t.time_s.clone())?;
        x.set_item("cwnd", t.cwnd.clone())?;
        x.set_item("rwnd", t.rwnd.clone())?;
        x.set_item("effective", t.effective.clone())?;
        x.set_item("ssthresh", t.ssthresh.clone())?;
        x.set_item("rtt_ms", t.rtt_ms.clone())?;
        x.set_item("delivered", t.delivered.clone())?;
        x.set_item("bwe_mbps", t.bwe_mbps.clone())?;
        traces.append(x)?;
    }
    d.set_item("traces", traces)?;
    let pcaps = PyDict::new(py);
    for (name, bytes) in &r.pcaps {
        pcaps.set_item(name, pyo3::types::PyBytes::new(py, bytes))?;
    }
    d.set_item("pcaps", pcaps)?;
    Ok(d.into_any().unbind())
}

/// The delay offset (ns) seed `seed` adds to link `name` under
/// `run.phase = max` (`netreturn_scenario::resolve::phase_offset`): the one
/// rule both simulators draw phases by.
#[pyfunction]
fn phase_offset(seed: u64, name: &str, max_ns: u64) -> u64 {
    netreturn_sim::resolve::phase_offset(seed, name, netreturn_base::Time(max_ns)).nanos()
}

/// The start time (s) of each TCP flow of seed `seed` (file, bulk and rate
/// flows, in the order of their numbers), as the simulator draws them
/// (`netreturn_sim::build`): the testbed starts repetition `seed`'s flows at
/// these, so that a repetition and the seed of its number start alike.
#[pyfunction]
#[pyo3(signature = (path, seed, overrides=vec![]))]
fn flow_starts(path: &str, seed: u64, overrides: Vec<(String, String)>) -> PyResult<Vec<f64>> {
    let s = load(path, overrides)?;
    let w = netreturn_sim::world::World::new(&s, seed)
        .map_err(|(field, message)| scenario_err(ScenarioError { file: path.to_string(), field, message }))?;
    Ok(w.tcp.iter().map(|f| f.start.secs_f64()).collect())
}

/// Runs one seed of a scenario (the GIL is released while it runs).
#[pyfunction]
#[pyo3(signature = (path, seed, overrides=vec![]))]
fn run(py: Python<'_>, path: &str, seed: u64, overrides: Vec<(String, String)>) -> PyResult<PyObject> {
    let s = load(path, overrides)?;
    let r = py
        .allow_threads(|| netreturn_sim::run(&s, seed))
        .map_err(|e| scenario_err(ScenarioError { file: path.to_string(), ..e }))?;
    result_to_py(py, &r)
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("NativeScenarioError", m.py().get_type::<NativeScenarioError>())?;
    m.add_function(wrap_pyfunction!(load_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(phase_offset, m)?)?;
    m.add_function(wrap_pyfunction!(flow_starts, m)?)?;
    m.add_function(wrap_pyfunction!(show_config, m)?)?;
    m.add_function(wrap_pyfunction!(resolve, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(mechanisms, m)?)?;
    m.add_function(wrap_pyfunction!(parse_time, m)?)?;
    m.add_function(wrap_pyfunction!(parse_rate, m)?)?;
    m.add_function(wrap_pyfunction!(parse_size, m)?)?;
    Ok(())
}
