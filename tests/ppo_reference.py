"""One PPO update in PyTorch, as CleanRL's ppo.py (discrete) and
ppo_continuous_action.py (box) compute it, on the batch tests/test_ppo.c
wrote into DIR: the losses, the gradient (before clipping) and the
parameters after clip_grad_norm_ and one Adam step must match cartsim's
(train/ppo.c) within float tolerance. Exit status 0 when they do.

The one difference from CleanRL, on purpose: a box actor's mean is
low + (high - low) * (tanh(z) + 1) / 2 of its output z (cartsim's dense
policy, so that the saved actor is a policy file), not z itself.

Parameters are in cartsim's order: per layer, per unit, its weights over the
layer's inputs then its bias; the actor, the critic, the box's log-stds.

    python tests/ppo_reference.py DIR
"""
import json
import math
import sys

import numpy as np
import torch
from torch import nn
from torch.distributions.categorical import Categorical
from torch.distributions.normal import Normal


def read(d, name, dtype=np.float32):
    return np.fromfile("%s/%s" % (d, name), dtype=dtype)


def widths(arch, n_in, n_out):
    hidden = [] if arch == "linear" else [int(h) for h in arch.split(":")[1].split("x")]
    return [n_in] + hidden + [n_out]


def network(ws):
    layers = []
    for k in range(len(ws) - 1):
        layers.append(nn.Linear(ws[k], ws[k + 1]))
        if k + 2 < len(ws):
            layers.append(nn.Tanh())
    return nn.Sequential(*layers)


def load(net, flat, at):
    """cartsim's order into nn.Linear's weight [out][in] and bias [out]."""
    for layer in net:
        if isinstance(layer, nn.Linear):
            n_in, n_out = layer.in_features, layer.out_features
            block = flat[at:at + (n_in + 1) * n_out].reshape(n_out, n_in + 1)
            layer.weight.data = torch.tensor(block[:, :n_in].copy())
            layer.bias.data = torch.tensor(block[:, n_in].copy())
            at += (n_in + 1) * n_out
    return at


def flat_of(net, which):
    """The network's parameters ("data") or gradients ("grad") in cartsim's order."""
    out = []
    for layer in net:
        if isinstance(layer, nn.Linear):
            weight = layer.weight.grad if which == "grad" else layer.weight.data
            bias = layer.bias.grad if which == "grad" else layer.bias.data
            out.append(torch.cat([weight, bias[:, None]], 1).reshape(-1))
    return torch.cat(out)


def main(d):
    meta = json.load(open(d + "/meta"))
    box, n_obs, n_act, rows = meta["box"], meta["n_obs"], meta["n_act"], meta["rows"]
    params = read(d, "params")
    actor = network(widths(meta["arch"], n_obs, n_act))
    critic = network(widths(meta["arch"], n_obs, 1))
    at = load(critic, params, load(actor, params, 0))
    log_std = nn.Parameter(torch.tensor(params[at:at + n_act].copy())) if box else None
    modules = list(actor.parameters()) + list(critic.parameters()) + ([log_std] if box else [])

    obs = torch.tensor(read(d, "obs").reshape(n_obs, rows).T.copy())
    if box:
        actions = torch.tensor(read(d, "actions").reshape(n_act, rows).T.copy())
    else:
        actions = torch.tensor(read(d, "actions", np.int32).astype(np.int64))
    old_logprob = torch.tensor(read(d, "logprob"))
    old_value = torch.tensor(read(d, "value"))
    adv = torch.tensor(read(d, "adv"))
    returns = torch.tensor(read(d, "ret"))
    clip, ent_coef, vf_coef = meta["clip"], meta["ent"], meta["vf"]

    # CleanRL's get_action_and_value and its loss, line for line
    z = actor(obs)
    if box:
        low, high = torch.tensor(meta["low"][:n_act]), torch.tensor(meta["high"][:n_act])
        mean = low + (high - low) * (torch.tanh(z) + 1) / 2
        probs = Normal(mean, torch.exp(log_std.expand_as(mean)))
        newlogprob, entropy = probs.log_prob(actions).sum(1), probs.entropy().sum(1)
    else:
        probs = Categorical(logits=z)
        newlogprob, entropy = probs.log_prob(actions), probs.entropy()
    newvalue = critic(obs).view(-1)
    logratio = newlogprob - old_logprob
    ratio = logratio.exp()
    approx_kl = ((ratio - 1) - logratio).mean()
    mb_adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    pg_loss = torch.max(-mb_adv * ratio, -mb_adv * torch.clamp(ratio, 1 - clip, 1 + clip)).mean()
    v_unclipped = (newvalue - returns) ** 2
    v_clipped = old_value + torch.clamp(newvalue - old_value, -clip, clip)
    v_loss = 0.5 * torch.max(v_unclipped, (v_clipped - returns) ** 2).mean()
    entropy_loss = entropy.mean()
    loss = pg_loss - ent_coef * entropy_loss + v_loss * vf_coef
    optimizer = torch.optim.Adam(modules, lr=meta["lr"], eps=1e-5)
    optimizer.zero_grad()
    loss.backward()

    def flat(which):
        parts = [flat_of(actor, which), flat_of(critic, which)]
        if box:
            parts.append(log_std.grad if which == "grad" else log_std.data)
        return torch.cat(parts).detach().numpy()

    grad = flat("grad")
    nn.utils.clip_grad_norm_(modules, meta["max_norm"])
    optimizer.step()
    after = flat("data")

    ok = True

    def compare(what, ours, theirs, rtol, atol):
        nonlocal ok
        ours, theirs = np.asarray(ours, np.float64), np.asarray(theirs, np.float64)
        err = np.abs(ours - theirs)
        worst = float(np.max(err - rtol * np.abs(theirs)))
        good = worst <= atol
        ok &= good
        print("%s: max |difference| %.3g (%s)" % (what, float(err.max()), "ok" if good else "DIFFERENT"))

    theirs = [pg_loss.item(), v_loss.item(), entropy_loss.item(), approx_kl.item()]
    compare("losses (policy, value, entropy, approx kl)", meta["losses"], theirs, 1e-4, 1e-6)
    compare("gradient", read(d, "grad"), grad, 1e-3, 1e-5)
    compare("parameters after the Adam step", read(d, "params_after"), after, 1e-5, 1e-6)
    changed = float(np.max(np.abs(after - params)))
    print("largest parameter change %.3g; gradient norm %.3g" % (changed, float(np.linalg.norm(grad))))
    return 0 if ok and changed > 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
