//! With MPI (feature `mpi`; `mpirun` on the path): `qnmc-mpi` on 2 and 4
//! MPI processes, ranks on loopback, makes the same chain bit for bit as on
//! one process, for DSGLD, PSGLD and HAMCMC (M = 2 and 3): every draw is
//! hashed on rank 0 and the hashes must be equal.
#![cfg(feature = "mpi")]

use std::process::Command;

/// The binary's report line, run on `ranks` MPI processes (0: one process,
/// threads backend with one thread, no MPI).
fn report(ranks: usize, args: &[&str]) -> String {
    let binary = env!("CARGO_BIN_EXE_qnmc-mpi");
    let output = if ranks == 0 {
        Command::new(binary)
            .args(["--threads", "1"])
            .args(args)
            .output()
    } else {
        Command::new("mpirun")
            // Root in CI containers; loopback only; more ranks than cores.
            .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
            .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
            .args(["--oversubscribe", "-np", &ranks.to_string()])
            .args([
                "--mca",
                "btl",
                "self,tcp",
                "--mca",
                "btl_tcp_if_include",
                "lo",
            ])
            .args(["--mca", "oob_tcp_if_include", "lo", binary])
            .args(args)
            .output()
    }
    .expect("mpirun and qnmc-mpi start");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{ranks} ranks {args:?}: {stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout.lines().last().unwrap_or_default().to_string()
}

fn field<'a>(line: &'a str, name: &str) -> &'a str {
    line.split(' ')
        .find_map(|f| f.strip_prefix(name).and_then(|v| v.strip_prefix('=')))
        .unwrap_or_else(|| panic!("no {name} in {line}"))
}

#[test]
fn mpi_chains_equal_the_one_process_chain() {
    let size = ["--size", "200,150,6000", "--iterations", "40"];
    for sampler in [
        &["--sampler", "dsgld"][..],
        &["--sampler", "psgld"],
        &["--sampler", "hamcmc", "--memory", "2", "--step", "1e-4"],
        &["--sampler", "hamcmc", "--memory", "3", "--step", "1e-4"],
    ] {
        let args: Vec<&str> = size.iter().chain(sampler).copied().collect();
        let one = report(0, &args);
        assert_eq!(field(&one, "draws"), "40", "{one}");
        assert_eq!(field(&one, "failure"), "none", "{one}");
        for ranks in [2, 4] {
            let many = report(ranks, &args);
            assert_eq!(field(&many, "ranks"), ranks.to_string());
            assert_eq!(field(&many, "hash"), field(&one, "hash"), "{one}\n{many}");
            assert_ne!(field(&many, "block_bytes_per_iteration"), "0", "{many}");
        }
    }
}
