# What a CUDA GPU does at Rewardsmith's network size: approach-tree's 639 features, two 64-unit tanh layers per head,
# 14 actions, 32 envs acting per step, and a PPO update of 4 epochs x 4 minibatches of 512 on 2,048 frames.
# tfjs-node-gpu cannot be installed where this was run (its libtensorflow comes from a download no machine here can
# reach), so PyTorch eager stands in for it: both launch one CUDA kernel per operation and copy the actions back to
# the CPU every step. tfjs-node-gpu's cost per operation is not expected to be lower (each operation crosses N-API and
# TensorFlow's eager C API), but that is not measured. Not part of `npm run bench`
# (it needs Python, PyTorch and a GPU): `python3 runner/bench/gpu-network.py` prints JSON and writes
# $OUT/gpu_network.json. Results and the fused engine's figures beside them: README, *Speed*.
import json, os, time, statistics as st
import numpy as np, torch
F, H, A, ENVS, ROWS, MB = 639, 64, 14, 32, 2048, 512
out = {"torch": torch.__version__, "cuda": torch.version.cuda, "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
       "cpu_count": os.cpu_count()}
rng = np.random.default_rng(0)
def feats(n):
    x = np.zeros((n, F), np.float32)
    m = rng.random((n, F)) < 0.11
    x[m] = rng.standard_normal(m.sum()).astype(np.float32)
    return x
def head(o):
    return torch.nn.Sequential(torch.nn.Linear(F, H), torch.nn.Tanh(), torch.nn.Linear(H, H), torch.nn.Tanh(), torch.nn.Linear(H, o))
def bench(dev, threads=None):
    if threads: torch.set_num_threads(threads)
    torch.manual_seed(0)
    pol, val = head(A).to(dev), head(1).to(dev)
    opt = torch.optim.Adam(list(pol.parameters()) + list(val.parameters()), lr=1e-3)
    sync = (lambda: torch.cuda.synchronize()) if dev == "cuda" else (lambda: None)
    obs = feats(ENVS)
    # acting: features in, actions and values out, every step (the env needs the actions before it can step)
    def act():
        x = torch.from_numpy(obs).to(dev)
        with torch.no_grad():
            lg = pol(x); v = val(x)
            a = torch.multinomial(torch.softmax(lg, -1), 1)
            lp = torch.log_softmax(lg, -1).gather(1, a)
        return a.cpu().numpy(), v.cpu().numpy(), lp.cpu().numpy()
    for _ in range(50): act()
    t = []
    for _ in range(5):
        s = time.perf_counter()
        for _ in range(200): act()
        t.append((time.perf_counter() - s) / 200 * 1e6)
    res = {"act_us_per_step_of_32": st.median(t)}
    X = torch.from_numpy(feats(ROWS)).to(dev); Aa = torch.randint(0, A, (ROWS, 1), device=dev)
    OLP = torch.full((ROWS, 1), -np.log(A), device=dev); ADV = torch.randn(ROWS, 1, device=dev); RET = torch.randn(ROWS, 1, device=dev)
    def update():
        for ep in range(4):
            perm = torch.randperm(ROWS, device=dev)
            for k in range(4):
                i = perm[k * MB:(k + 1) * MB]
                x, a, olp, adv, ret = X[i], Aa[i], OLP[i], ADV[i], RET[i]
                adv = (adv - adv.mean()) / (adv.std() + 1e-8)
                lg = pol(x); lsm = torch.log_softmax(lg, -1); lp = lsm.gather(1, a)
                ratio = torch.exp(lp - olp)
                pl = -torch.min(ratio * adv, torch.clamp(ratio, 0.8, 1.2) * adv).mean()
                ent = -(lsm.exp() * lsm).sum(-1).mean()
                vl = ((val(x) - ret) ** 2).mean()
                loss = pl + 0.5 * vl - 0.01 * ent
                opt.zero_grad(); loss.backward()
                torch.nn.utils.clip_grad_norm_(list(pol.parameters()) + list(val.parameters()), 0.5)
                opt.step()
        sync()
    for _ in range(3): update()
    t = []
    for _ in range(10):
        s = time.perf_counter(); update(); t.append((time.perf_counter() - s) * 1e3)
    res["update_ms_per_2048_frames"] = st.median(t)
    # a 65,536-frame run's network work: 2,048 acting steps of 32 envs and 32 updates
    res["network_s_per_65536_frames"] = (res["act_us_per_step_of_32"] * 2048 / 1e6) + res["update_ms_per_2048_frames"] * 32 / 1e3
    return res
if torch.cuda.is_available():
    x = torch.zeros(1, device="cuda"); torch.cuda.synchronize()
    s = time.perf_counter()
    for _ in range(10000): x.add_(1)
    torch.cuda.synchronize(); out["launch_us"] = (time.perf_counter() - s) / 10000 * 1e6
    out["cuda_eager"] = bench("cuda")
out["cpu_1_thread"] = bench("cpu", 1)
print(json.dumps(out, indent=1))
json.dump(out, open(os.path.join(os.environ.get("OUT", "."), "gpu_network.json"), "w"), indent=1)
