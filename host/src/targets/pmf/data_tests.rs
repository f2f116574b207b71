//! Rating sets: the synthetic recipe's counts and determinism, the test
//! split, the `ratings.dat` reader and the block partition.

use super::*;
use crate::input::InputErrorKind;
use crate::model::ModelRng;
use rand_core::SeedableRng;
use std::path::PathBuf;

/// Every (user, item) pair of `ratings`, training and test, as u64 keys.
fn pairs(ratings: &Ratings) -> Vec<u64> {
    [ratings.train(), ratings.test()]
        .iter()
        .flat_map(|t| {
            (0..t.len()).map(move |n| (u64::from(t.users()[n]) << 32) | u64::from(t.items()[n]))
        })
        .collect()
}

/// Ratings per user, training and test.
fn per_user(ratings: &Ratings) -> Vec<usize> {
    let mut counts = vec![0; ratings.users()];
    for t in [ratings.train(), ratings.test()] {
        for &u in t.users() {
            counts[u as usize] += 1;
        }
    }
    counts
}

/// Ratings per item, training and test.
fn per_item(ratings: &Ratings) -> Vec<usize> {
    let mut counts = vec![0; ratings.items()];
    for t in [ratings.train(), ratings.test()] {
        for &j in t.items() {
            counts[j as usize] += 1;
        }
    }
    counts
}

fn median(values: &[usize]) -> usize {
    let mut v = values.to_vec();
    v.sort_unstable();
    v[v.len() / 2]
}

/// Checks what every synthetic set must satisfy: the counts asked for, at
/// least `min_per_user` and at most `max_per_user` a user, no repeated
/// pair, whole ratings 1..=5, a tenth held out.
fn check_recipe(recipe: &SyntheticRecipe, ratings: &Ratings) {
    assert_eq!(
        (ratings.users(), ratings.items()),
        (recipe.users, recipe.items)
    );
    assert_eq!(ratings.len(), recipe.ratings);
    let held_out = (0.1 * recipe.ratings as f64).round() as usize;
    assert_eq!(ratings.test().len(), held_out);
    let counts = per_user(ratings);
    let (fewest, most) = (*counts.iter().min().unwrap(), *counts.iter().max().unwrap());
    assert!(
        fewest >= recipe.min_per_user && most <= recipe.max_per_user(),
        "per-user counts {fewest}..={most}"
    );
    let mut keys = pairs(ratings);
    keys.sort_unstable();
    let before = keys.len();
    keys.dedup();
    assert_eq!(keys.len(), before, "repeated (user, item) pairs");
    for t in [ratings.train(), ratings.test()] {
        for &r in t.ratings() {
            assert!((1.0..=5.0).contains(&r) && r.fract() == 0.0, "rating {r}");
        }
    }
}

#[test]
fn the_full_size_synthetic_set_has_movielens_counts_and_shape() {
    let recipe = SyntheticRecipe::movielens_1m(SYNTHETIC_SEED);
    let ratings = recipe.build().unwrap();
    check_recipe(&recipe, &ratings);
    assert_eq!((ratings.users(), ratings.items()), (6040, 3883));
    assert_eq!(ratings.len(), 1_000_209);
    assert_eq!(ratings.test().len(), 100_021);
    assert!((ratings.density() - 0.0426).abs() < 0.0001);
    // Heavy tails: MovieLens-1M has per-user median 96, mean 166, max 2314,
    // and per-item median 124, max 3428.
    let users = per_user(&ratings);
    let items = per_item(&ratings);
    let (user_median, user_max) = (median(&users), *users.iter().max().unwrap());
    let (item_median, item_max) = (median(&items), *items.iter().max().unwrap());
    assert!(
        (70..=120).contains(&user_median),
        "user median {user_median}"
    );
    assert!(user_max > 15 * user_median, "user max {user_max}");
    assert!(
        (60..=200).contains(&item_median),
        "item median {item_median}"
    );
    assert!(item_max > 15 * item_median, "item max {item_max}");
    // The histogram: mean about 3.6, every rating used, 4 the most common.
    let mut histogram = [0usize; 5];
    for t in [ratings.train(), ratings.test()] {
        for &r in t.ratings() {
            histogram[r as usize - 1] += 1;
        }
    }
    let mean = (ratings.train().mean() * ratings.train().len() as f64
        + ratings.test().mean() * ratings.test().len() as f64)
        / ratings.len() as f64;
    assert!((3.45..=3.75).contains(&mean), "mean rating {mean}");
    let most = (0..5).max_by_key(|&r| histogram[r]).unwrap() + 1;
    assert_eq!(most, 4, "histogram {histogram:?}");
    assert!(
        histogram[0] as f64 > 0.02 * ratings.len() as f64,
        "{histogram:?}"
    );
    eprintln!(
        "full synthetic set: users median {user_median} max {user_max}, items median \
         {item_median} max {item_max}, mean rating {mean:.3}, histogram {histogram:?}"
    );
}

#[test]
fn a_synthetic_set_is_a_function_of_its_recipe() {
    let recipe = SyntheticRecipe::new(120, 80, 4000, 11);
    let a = recipe.build().unwrap();
    check_recipe(&recipe, &a);
    assert_eq!(a, recipe.build().unwrap());
    let b = SyntheticRecipe { seed: 12, ..recipe }.build().unwrap();
    check_recipe(&recipe, &b);
    assert_ne!(a.train(), b.train());
    assert_ne!(pairs(&a), pairs(&b));
    // Every user at the minimum, and every user at the maximum.
    for ratings in [
        120 * 20,
        120 * SyntheticRecipe::new(120, 80, 0, 0).max_per_user(),
    ] {
        let recipe = SyntheticRecipe::new(120, 80, ratings, 5);
        let set = recipe.build().unwrap();
        check_recipe(&recipe, &set);
    }
    let tenth = SyntheticRecipe::movielens_1m_tenth(SYNTHETIC_SEED);
    check_recipe(&tenth, &tenth.build().unwrap());
}

#[test]
fn impossible_recipes_are_refused() {
    let e = SyntheticRecipe::new(10, 15, 200, 1).build().unwrap_err();
    assert!(e.to_string().contains("do not fit among 15 items"), "{e}");
    let e = SyntheticRecipe::new(10, 100, 199, 1).build().unwrap_err();
    assert!(e.to_string().contains("200 to 600 ratings"), "{e}");
    let e = SyntheticRecipe::new(10, 100, 601, 1).build().unwrap_err();
    assert!(e.to_string().contains("not 601"), "{e}");
    assert!(SyntheticRecipe::new(0, 100, 0, 1).build().is_err());
}

fn small_triples(n: usize) -> Triples {
    let mut t = Triples::with_capacity(n);
    for k in 0..n {
        t.push((k / 7) as u32, (k % 7) as u32, (1 + k % 5) as f32);
    }
    t
}

#[test]
fn the_split_holds_out_a_tenth_in_order_and_by_the_seed() {
    let all = small_triples(203);
    let split = |seed| {
        Ratings::split(
            29,
            7,
            all.clone(),
            TEST_FRACTION,
            seed,
            RatingsSource::Other("test".into()),
        )
        .unwrap()
    };
    let a = split(3);
    assert_eq!((a.train().len(), a.test().len()), (183, 20));
    // Together the two parts are the given ratings, each in the given order.
    let key = |t: &Triples, n: usize| u64::from(t.users()[n]) * 7 + u64::from(t.items()[n]);
    for part in [a.train(), a.test()] {
        let keys: Vec<u64> = (0..part.len()).map(|n| key(part, n)).collect();
        assert!(keys.windows(2).all(|w| w[0] < w[1]), "order changed");
    }
    let mut keys: Vec<u64> = (0..a.train().len())
        .map(|n| key(a.train(), n))
        .chain((0..a.test().len()).map(|n| key(a.test(), n)))
        .collect();
    keys.sort_unstable();
    assert_eq!(keys, (0..203).collect::<Vec<u64>>());
    assert_eq!(a, split(3));
    assert_ne!(a.test(), split(4).test());
    assert_eq!(a.range(), (1.0, 5.0));
    assert_eq!(a.clip(7.0), 5.0);

    let mut bad = all.clone();
    bad.push(29, 0, 3.0);
    let e = Ratings::split(29, 7, bad, 0.1, 1, RatingsSource::Other("test".into())).unwrap_err();
    assert!(e.to_string().contains("user 29"), "{e}");
    let e = Ratings::split(29, 7, all, 1.0, 1, RatingsSource::Other("test".into())).unwrap_err();
    assert!(e.to_string().contains("[0, 1)"), "{e}");
}

fn temp_file(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("qnmc-pmf-tests-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

const RATINGS_DAT: &str = "\
1::1193::5::978300760
1::661::3::978302109
1::914::3::978301968
2::1193::4::978298413
2::3408::4::978298413

10::661::1::978298000\r
7::914::2.5::978298001
";

#[test]
fn ratings_dat_is_read_with_dense_ids() {
    let path = temp_file("ratings.dat", RATINGS_DAT);
    let ratings = read_movielens(&path).unwrap();
    assert_eq!((ratings.users(), ratings.items(), ratings.len()), (4, 4, 7));
    assert_eq!(ratings.test().len(), 1);
    let RatingsSource::MovieLens {
        user_ids,
        item_ids,
        sha256,
        ..
    } = ratings.source()
    else {
        panic!("{:?}", ratings.source());
    };
    assert_eq!(user_ids, &[1, 2, 7, 10]);
    assert_eq!(item_ids, &[661, 914, 1193, 3408]);
    let mut hash = crate::input::Sha256::new();
    hash.update(RATINGS_DAT.as_bytes());
    assert_eq!(sha256, &hash.hex());
    // Every line is there once, under its dense indices.
    let mut seen: Vec<(u32, u32, f32)> = [ratings.train(), ratings.test()]
        .iter()
        .flat_map(|t| {
            (0..t.len()).map(move |n| {
                (
                    user_ids[t.users()[n] as usize],
                    item_ids[t.items()[n] as usize],
                    t.ratings()[n],
                )
            })
        })
        .collect();
    seen.sort_by_key(|a| (a.0, a.1));
    assert_eq!(
        seen,
        [
            (1, 661, 3.0),
            (1, 914, 3.0),
            (1, 1193, 5.0),
            (2, 1193, 4.0),
            (2, 3408, 4.0),
            (7, 914, 2.5),
            (10, 661, 1.0)
        ]
    );
    // The lines' order does not change the split.
    let mut lines: Vec<&str> = RATINGS_DAT.lines().collect();
    lines.reverse();
    let reversed = read_movielens(temp_file("reversed.dat", &lines.join("\n"))).unwrap();
    assert_eq!(
        (reversed.train(), reversed.test()),
        (ratings.train(), ratings.test())
    );
}

#[test]
fn ratings_dat_errors_name_the_line() {
    let cases = [
        (
            "1::1193::5::978300760\n2::x::4::1\n",
            2,
            Some(2),
            InputErrorKind::NotANumber,
            "MovieID \"x\" is not a whole number",
        ),
        (
            "1::1193::5::978300760\n\n3::1::five::1\n",
            3,
            Some(3),
            InputErrorKind::NotANumber,
            "Rating \"five\" is not a finite number",
        ),
        (
            "1::1193::5\n",
            1,
            None,
            InputErrorKind::Format,
            "got 3 fields",
        ),
        (
            "1,1193,5,978300760\n",
            1,
            None,
            InputErrorKind::Format,
            "got 1 field ",
        ),
        (
            "1::2::3::4\n5::6::7::4\n1::2::4::9\n",
            3,
            None,
            InputErrorKind::Format,
            "user 1 rated movie 2 already on line 1",
        ),
        (
            "-1::2::3::4\n",
            1,
            Some(1),
            InputErrorKind::NotANumber,
            "UserID \"-1\"",
        ),
        (
            "1::2::3::4\n4294967296::2::3::4\n",
            2,
            Some(1),
            InputErrorKind::NotANumber,
            "an id below 2^32",
        ),
        (
            "1::2::inf::4\n",
            1,
            Some(3),
            InputErrorKind::NotANumber,
            "finite",
        ),
        (
            "1::2::3::yesterday\n",
            1,
            Some(4),
            InputErrorKind::NotANumber,
            "Timestamp",
        ),
    ];
    for (k, (text, line, column, kind, message)) in cases.into_iter().enumerate() {
        let path = temp_file(&format!("bad{k}.dat"), text);
        let e = read_movielens(&path).unwrap_err();
        assert_eq!(
            (e.line(), e.column(), e.kind()),
            (Some(line), column, kind),
            "{e}"
        );
        assert!(e.message().contains(message), "{e}");
        let place = match column {
            Some(c) => format!("{}:{line}:{c}: ", path.display()),
            None => format!("{}:{line}: ", path.display()),
        };
        assert!(e.to_string().starts_with(&place), "{e}");
    }
    let e = read_movielens(temp_file("empty.dat", "\n \n")).unwrap_err();
    assert_eq!(e.kind(), InputErrorKind::Empty);
    let e = read_movielens(std::env::temp_dir().join("qnmc-no-such-dir/ratings.dat")).unwrap_err();
    assert_eq!(e.kind(), InputErrorKind::Io);
}

#[test]
fn the_block_parts_are_the_grid_diagonals_and_cover_the_training_set() {
    let ratings = SyntheticRecipe::new(90, 70, 3000, 4).build().unwrap();
    let partition = BlockPartition::new(&ratings, 4).unwrap();
    let train = ratings.train();
    let mut seen = vec![0u8; train.len()];
    for p in 0..4 {
        for &n in partition.part(p) {
            let (u, j, _) = train.get(n as usize);
            let (bu, bj) = (partition.user_block(u), partition.item_block(j));
            // Block (b, (b + p) mod 4).
            assert_eq!(bj, (bu + p) % 4, "rating {n} in part {p}");
            seen[n as usize] += 1;
        }
    }
    assert!(
        seen.iter().all(|&s| s == 1),
        "parts overlap or miss ratings"
    );
    // Balanced block ranges: 90 users in blocks of 22 or 23.
    let rows: Vec<usize> = (0..90).map(|u| partition.user_block(u)).collect();
    for b in 0..4 {
        let size = rows.iter().filter(|&&r| r == b).count();
        assert!((22..=23).contains(&size), "block {b}: {size}");
    }
    assert_eq!(partition.sizes().iter().sum::<usize>(), train.len());
    assert!(BlockPartition::new(&ratings, 0).is_err());
    assert!(BlockPartition::new(&ratings, 71).is_err());
}

#[test]
fn parts_are_chosen_in_proportion_to_their_size() {
    let ratings = SyntheticRecipe::new(90, 70, 3000, 4).build().unwrap();
    let partition = BlockPartition::new(&ratings, 4).unwrap();
    let sizes = partition.sizes();
    let total: usize = sizes.iter().sum();
    let draws = 200_000;
    let mut counts = [0usize; 4];
    let mut rng = ModelRng::seed_from_u64(9);
    for _ in 0..draws {
        counts[partition.choose(&mut rng)] += 1;
    }
    // Each count is binomial(draws, |part|/N): within 5 of its standard
    // errors (a false alarm about 6e-7 per part). The parts differ enough
    // that a uniform choice would be more than 8 standard errors off.
    let uniform_off = (0..4)
        .map(|p| {
            let q = sizes[p] as f64 / total as f64;
            (q - 0.25).abs() * draws as f64 / (draws as f64 * q * (1.0 - q)).sqrt()
        })
        .fold(0.0, f64::max);
    assert!(
        uniform_off > 8.0,
        "parts {sizes:?} too alike to test the choice"
    );
    for p in 0..4 {
        let q = sizes[p] as f64 / total as f64;
        let se = (draws as f64 * q * (1.0 - q)).sqrt();
        let z = (counts[p] as f64 - draws as f64 * q) / se;
        assert!(
            z.abs() < 5.0,
            "part {p}: {} of {draws}, expected {}",
            counts[p],
            draws as f64 * q
        );
    }
}
