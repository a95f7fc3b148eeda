use wgpu_flash_attn::{Attention, DType, FlashContext};
fn main() {
    let ctx = FlashContext::default_blocking().unwrap();
    for d in std::env::args().skip(1).map(|a| a.parse::<u32>().unwrap()) {
        let p = Attention::new(1, 2, 2, 37, 70, d)
            .dtype(DType::F32)
            .with_lse(true);
        let t = std::time::Instant::now();
        let tiles = std::env::var("TILES").ok().map(|t| {
            let v: Vec<u32> = t.split('x').map(|x| x.parse().unwrap()).collect();
            wgpu_flash_attn::Tiles {
                block_m: v[0],
                block_n: v[1],
                threads_x: v[2],
                threads_y: v[3],
            }
        });
        let plan = ctx
            .plan_with(
                &p,
                wgpu_flash_attn::PlanOptions {
                    tiles,
                    ..Default::default()
                },
            )
            .unwrap();
        let t1 = t.elapsed();
        let n = p.span_of(wgpu_flash_attn::Tensor::K) as usize;
        let nq = p.span_of(wgpu_flash_attn::Tensor::Q) as usize;
        let x = vec![0.1f32; n];
        let xq = vec![0.1f32; nq];
        ctx.run_blocking(&p, &xq, &x, &x).unwrap();
        let t2 = std::time::Instant::now();
        ctx.run_blocking(&p, &xq, &x, &x).unwrap();
        println!("second run {:?}", t2.elapsed());
        println!(
            "d={d} tiles {:?} plan {:?} total {:?}",
            plan.plan().tiles,
            t1,
            t.elapsed()
        );
    }
}
