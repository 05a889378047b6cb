//! NGWA in a simulated world (seed 001, SPEC.md 2.6): the routers that
//! mark. The `[ngwa]` table, its modes and the end hosts' settings belong to
//! the scenario model ([`netreturn_scenario::ngwa`]).

pub use netreturn_scenario::ngwa::*;

/// Attaches NGWA's router rule to the marking interfaces of `w`.
pub(crate) fn attach_routers(spec: &NgwaSpec, w: &mut crate::world::World) -> Result<(), (String, String)> {
    if spec.switches().is_none() {
        return Ok(());
    }
    let names: Vec<String> = match &spec.routers {
        Some(list) => list.clone(),
        None => {
            let mut links = vec![0u32; w.topo.nodes.len()];
            for f in &w.topo.ifaces {
                links[f.from as usize] += 1;
            }
            w.topo.ifaces.iter().filter(|f| links[f.from as usize] > 1).map(|f| f.name.clone()).collect()
        }
    };
    for name in names {
        let r = spec.router().expect("NGWA is on");
        w.attach_ngwa(&name, r, spec.mark_tick.map(|t| t.0)).map_err(|m| ("ngwa.routers".to_string(), m))?;
    }
    Ok(())
}
