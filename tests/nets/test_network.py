"""gdi.nets.network: the GDINetwork contract the runtime relies on.

Shapes and dtypes for every torso × family count; the recurrent state is carried across calls
and zeroed at episode starts; GDI-H's families are disjoint; the auxiliary heads' gradient
contract; the IMPALA-deep parameter count; argument errors.
"""

import itertools

import pytest
import torch

from gdi.learning.auxiliary import dynamics_losses
from gdi.nets import NetOutputs, build
from tests.nets.helpers import LSTM_UNITS, TINY, random_inputs, summed_terms, tiny_net
from tests.tolerance import assert_close, is_close

TORSO_FAMILIES = list(itertools.product(TINY, (1, 2)))


def aux_losses(net, outputs, actions, valid) -> dict:
    """The learner's auxiliary losses: the network's predictions, gdi.learning's losses."""
    return dynamics_losses(*net.dynamics_predictions(outputs, actions, valid), actions, valid)


@pytest.mark.parametrize(("torso", "families"), TORSO_FAMILIES)
def test_output_shapes_and_dtypes(torso, families):
    net = tiny_net(torso, families)
    T, B, A, F, H = 3, 2, net.num_actions, families, LSTM_UNITS
    state0 = net.initial_state(B)
    assert state0.shape == (B, F, 2, H) and state0.dtype == torch.float32
    assert not state0.any()
    obs, prev_action, prev_reward, reset, _ = random_inputs(net, T, B)
    outputs, state = net(obs, prev_action, prev_reward, reset, state0)
    assert isinstance(outputs, NetOutputs)
    assert outputs.adv.shape == (F, T, B, A)
    assert outputs.value.shape == (F, T, B)
    assert outputs.embedding.shape == (F, T, B, net.embedding_size)
    assert state.shape == (B, F, 2, H) and state.is_contiguous()
    for tensor in (*outputs, state):
        assert tensor.dtype == torch.float32 and torch.isfinite(tensor).all()


@pytest.mark.parametrize(("torso", "families"), [("mlp", 2), ("minatar", 1)])
def test_state_is_carried_across_calls(torso, families):
    net = tiny_net(torso, families)
    obs, prev_action, prev_reward, reset, state = random_inputs(net, 9, 3, reset_prob=0.2)
    with torch.no_grad():
        whole, whole_state = net(obs, prev_action, prev_reward, reset, state)
        first, mid_state = net(obs[:4], prev_action[:4], prev_reward[:4], reset[:4], state)
        second, end_state = net(obs[4:], prev_action[4:], prev_reward[4:], reset[4:], mid_state)
    # Sequences of other lengths run other kernel blocks: rounding differs, step after step.
    terms = summed_terms(net, num_steps=9)
    for name in NetOutputs._fields:
        joined = torch.cat((getattr(first, name), getattr(second, name)), dim=1)
        assert_close(joined, getattr(whole, name), terms=terms, msg=name)
    assert_close(end_state, whole_state, terms=terms)
    # The state really matters: another starting state changes the outputs.
    other, _ = net(obs, prev_action, prev_reward, reset, state + 1.0)
    assert not is_close(other.adv, whole.adv)


@pytest.mark.parametrize(("torso", "families"), [("mlp", 2), ("impala_deep", 1)])
def test_reset_equals_a_fresh_sequence(torso, families):
    net = tiny_net(torso, families)
    obs, prev_action, prev_reward, reset, state = random_inputs(net, 7, 2)
    k = 3
    reset[k, 0] = True  # batch entry 0 starts an episode at t = k; entry 1 does not
    prev_action[k, 0] = -1  # placeholders that must never be read
    prev_reward[k, 0] = float("nan")
    with torch.no_grad():
        outputs, final = net(obs, prev_action, prev_reward, reset, state)
        fresh_inputs = (obs[k:, :1], prev_action[k:, :1].clone(), prev_reward[k:, :1].clone())
        fresh_inputs[1][0] = 2  # another placeholder at the fresh start: still not read
        fresh, fresh_final = net(*fresh_inputs, reset[k:, :1], net.initial_state(1))
        no_reset = reset.clone()
        no_reset[k, 0] = False
        prev_action[k, 0], prev_reward[k, 0] = 0, 0.0
        unreset, _ = net(obs, prev_action, prev_reward, no_reset, state)
    terms = summed_terms(net, num_steps=7)
    for name in NetOutputs._fields:
        assert_close(getattr(outputs, name)[:, k:, :1], getattr(fresh, name), terms=terms,
                     msg=name)
    assert_close(final[:1], fresh_final, terms=terms)
    # Entry 1 (no reset) is untouched by entry 0's reset; entry 0 before t = k too (up to
    # rounding: a reset splits the unroll into other kernel calls).
    assert_close(outputs.adv[:, :, 1], unreset.adv[:, :, 1], terms=terms)
    assert_close(outputs.adv[:, :k, 0], unreset.adv[:, :k, 0], terms=terms)
    assert not is_close(outputs.adv[:, k:, 0], unreset.adv[:, k:, 0])


def test_reset_zeroes_previous_action_and_reward_inputs():
    net = tiny_net("mlp", families=2)
    obs, prev_action, prev_reward, reset, state = random_inputs(net, 4, 2)
    reset[2, 1] = True
    prev_action[2, 1], prev_reward[2, 1] = -1, float("nan")
    core_inputs = []
    for family in net.family_nets:
        family.core.register_forward_pre_hook(lambda _, args: core_inputs.append(args[0]))
    with torch.no_grad():
        net(obs, prev_action, prev_reward, reset, state)
    E, A = net.embedding_size, net.num_actions
    for x in core_inputs:  # [T, B, E + A + 1] = [e_t, one-hot a_{t-1}, r_{t-1}]
        # Exact: zeroed inputs, a one-hot and a copied reward.
        assert torch.equal(x[2, 1, E:], torch.zeros(A + 1))
        assert torch.equal(x[1, 1, E:E + A], torch.nn.functional.one_hot(prev_action[1, 1], A).float())
        assert x[1, 1, -1] == prev_reward[1, 1]


def test_uint8_observations_are_scaled_by_1_over_255():
    net = tiny_net("minatar")
    obs, prev_action, prev_reward, reset, state = random_inputs(net, 2, 2)
    with torch.no_grad():
        as_uint8, _ = net(obs, prev_action, prev_reward, reset, state)
        as_float, _ = net(obs.float() / 255.0, prev_action, prev_reward, reset, state)
    # x·(1/255) and x/255 round apart by an ulp; the network carries that through its sums.
    assert_close(as_uint8.adv, as_float.adv, terms=summed_terms(net, num_steps=2))


def test_gdi_h_families_share_no_parameter_and_start_apart():
    net = tiny_net("minatar", families=2)
    first, second = (dict(family.named_parameters()) for family in net.family_nets)
    assert first.keys() == second.keys()
    pointers = [{p.data_ptr() for p in family.values()} for family in (first, second)]
    assert not pointers[0] & pointers[1]
    for name in first:
        assert not torch.equal(first[name], second[name]), name
    assert len(list(net.parameters())) == 2 * len(first)


def test_gdi_h_families_are_independent_functions():
    net = tiny_net("mlp", families=2)
    inputs = random_inputs(net, 4, 2)
    with torch.no_grad():
        before, _ = net(*inputs)
        for p in net.family_nets[1].parameters():
            p.add_(0.5)
        after, _ = net(*inputs)
    # Exact: family 0 runs the same kernels on the same inputs; no parameter of family 1
    # enters its sums.
    assert torch.equal(after.adv[0], before.adv[0])
    assert torch.equal(after.value[0], before.value[0])
    assert not is_close(after.adv[1], before.adv[1])


def impala_deep_parameter_count(channels=4, actions=18, hidden=256, embedding=256):
    """The count written out layer by layer (conv: k·k·in·out + out; linear: in·out + out)."""
    def conv(cin, cout):
        return 3 * 3 * cin * cout + cout

    def linear(n_in, n_out):
        return n_in * n_out + n_out

    torso, cin = 0, channels
    for cout in (16, 32, 32):
        torso += conv(cin, cout) + 2 * 2 * conv(cout, cout)  # stage conv + 2 blocks of 2 convs
        cin = cout
    torso += linear(32 * 11 * 11, embedding)  # 97_744 conv + 991_488 linear = 1_089_232
    lstm_in = embedding + actions + 1  # [e_t, one-hot a_{t-1}, r_{t-1}] = 275
    core = 4 * hidden * (lstm_in + hidden) + 2 * 4 * hidden  # nn.LSTM: two bias vectors
    heads = linear(hidden, actions) + linear(hidden, 1)
    dynamics = (linear(2 * embedding, embedding) + linear(embedding, actions)  # inverse
                + linear(embedding + actions, embedding) + linear(embedding, embedding))  # fwd
    return torso + core + heads, dynamics


def test_impala_deep_atari_shape_and_parameter_count():
    torch.manual_seed(0)
    net = build((4, 84, 84), 18)  # the paper's setting: 4 stacked 84×84 frames, full actions
    without_aux, dynamics = impala_deep_parameter_count()
    assert (without_aux, dynamics) == (1_639_907, 272_146)
    total = sum(p.numel() for p in net.parameters())
    assert total == without_aux + dynamics == 1_912_053
    assert 1.6e6 < total < 2.0e6  # documented range: ~1.64M (A, V) + ~0.27M (dynamics heads)
    two = build((4, 84, 84), 18, families=2)
    assert sum(p.numel() for p in two.parameters()) == 2 * total
    obs = torch.randint(0, 256, (1, 2, 4, 84, 84), dtype=torch.uint8)
    zeros = torch.zeros(1, 2, dtype=torch.long)
    with torch.no_grad():
        outputs, state = net(obs, zeros, zeros.float(), zeros.bool(), net.initial_state(2))
    assert outputs.adv.shape == (1, 1, 2, 18) and outputs.embedding.shape == (1, 1, 2, 256)
    assert state.shape == (2, 1, 2, 256)


# ---------------------------------------------------------------------------------------------
# Auxiliary dynamics heads


def aux_batch(net, num_steps=6, batch=3):
    obs, prev_action, prev_reward, reset, state = random_inputs(net, num_steps, batch, seed=3)
    actions = prev_action[1:].clone()  # a_t = the action taken at obs[t] = prev_action[t + 1]
    valid = torch.ones(num_steps - 1, batch)
    return (obs, prev_action, prev_reward, reset, state), actions, valid


@pytest.mark.parametrize("families", [1, 2])
def test_auxiliary_gradient_reaches_heads_and_torso(families):
    net = tiny_net("minatar", families)
    inputs, actions, valid = aux_batch(net)
    outputs, _ = net(*inputs)
    losses = aux_losses(net, outputs, actions, valid)
    assert set(losses) == {"inverse_dynamics", "forward_dynamics"}
    assert all(loss.dim() == 0 and torch.isfinite(loss) for loss in losses.values())
    sum(losses.values()).backward()
    for family in net.family_nets:
        for module in (family.inverse_dynamics, family.forward_dynamics, family.torso):
            for name, p in module.named_parameters():
                assert p.grad is not None and p.grad.abs().sum() > 0, name
        # The auxiliary losses are computed from the torso output only.
        assert all(p.grad is None for p in family.core.parameters())
        assert all(p.grad is None for p in family.adv_head.parameters())


def test_forward_dynamics_target_is_detached():
    net = tiny_net("mlp", families=2)
    inputs, actions, valid = aux_batch(net)
    with torch.no_grad():
        outputs, _ = net(*inputs)
    embedding = outputs.embedding.clone().requires_grad_(True)
    leaf_outputs = outputs._replace(embedding=embedding)
    aux_losses(net, leaf_outputs, actions, valid)["forward_dynamics"].backward()
    # e_{T−1} is only ever a forward-dynamics *target*: no gradient; every e_t, t < T−1, is an
    # input of the forward head and gets some.
    assert torch.equal(embedding.grad[:, -1], torch.zeros_like(embedding.grad[:, -1]))
    assert (embedding.grad[:, :-1].abs().sum(dim=-1) > 0).all()
    embedding.grad = None
    aux_losses(net, leaf_outputs, actions, valid)["inverse_dynamics"].backward()
    assert (embedding.grad[:, -1].abs().sum(dim=-1) > 0).all()  # inverse: e_{t+1} is an input


def test_auxiliary_losses_equal_the_heads_and_pure_losses():
    from gdi.learning.auxiliary import forward_dynamics_loss, inverse_dynamics_loss

    net = tiny_net("mlp", families=2)
    inputs, actions, valid = aux_batch(net)
    valid[2, 1] = 0.0
    actions[2, 1] = -1  # masked: a placeholder never read
    with torch.no_grad():
        outputs, _ = net(*inputs)
        losses = aux_losses(net, outputs, actions, valid)
        safe = actions.clamp_min(0)
        inv = fwd = 0.0
        for f, family in enumerate(net.family_nets):
            e = outputs.embedding[f]
            inv += inverse_dynamics_loss(family.inverse_dynamics(e[:-1], e[1:]), safe, valid)
            fwd += forward_dynamics_loss(family.forward_dynamics(e[:-1], safe), e[1:], valid)
    # Means over the rows of each head's outputs.
    terms = summed_terms(net) * valid.numel()
    assert_close(losses["inverse_dynamics"], inv, terms=terms)
    assert_close(losses["forward_dynamics"], fwd, terms=terms)


def test_no_aux_means_no_heads_and_no_losses():
    net = tiny_net("mlp", aux=False)
    assert not any("dynamics" in name for name, _ in net.named_parameters())
    inputs, actions, valid = aux_batch(net)
    outputs, _ = net(*inputs)
    assert net.dynamics_predictions(outputs, actions, valid) is None


# ---------------------------------------------------------------------------------------------
def test_hidden_heads_compute_relu_mlp_from_the_core_output():
    """head_hidden > 0: A and V are linear(relu(linear(h_t))) of the LSTM output h_t, checked
    against the same arithmetic written out from the layers' weights."""
    torch.manual_seed(0)
    net = build((4,), 3, torso="mlp", lstm_units=LSTM_UNITS, head_hidden=5)
    family = net.family_nets[0]
    obs, prev_action, prev_reward, reset, state = random_inputs(net, 4, 2)
    outputs, _ = net(obs, prev_action, prev_reward, reset, state)
    # The core's output, by running the torso and the core by hand.
    x = family.torso(obs.reshape(8, 4).float())
    action_reward = torch.cat(
        (torch.nn.functional.one_hot(prev_action.clamp(min=0), 3).float()
         * (~reset).unsqueeze(-1), (prev_reward * ~reset).unsqueeze(-1)), dim=-1)
    h, _ = family.core(torch.cat((x.view(4, 2, -1), action_reward), -1), reset, state[:, 0])
    for head, got in ((family.adv_head, outputs.adv[0]), (family.value_head, outputs.value[0])):
        first, last = head[0], head[2]
        hidden = torch.clamp(h @ first.weight.T + first.bias, min=0)
        expected = hidden @ last.weight.T + last.bias
        assert_close(got, expected.squeeze(-1) if got.dim() == 2 else expected,
                     terms=summed_terms(net, num_steps=4))
    assert first.out_features == 5


def test_linear_heads_keep_their_parameter_names():
    """head_hidden = 0 (the default) keeps the heads single linear layers, so checkpoints
    written before the option existed still load."""
    names = set(build((4,), 3, torso="mlp", lstm_units=LSTM_UNITS).state_dict())
    assert {"family_nets.0.adv_head.weight", "family_nets.0.value_head.bias"} <= names


@pytest.mark.parametrize("families", [1, 2])
def test_a_separate_policy_head_is_a_third_head_on_the_core_output(families):
    """policy_head="separate": logits = L(h_t), a linear head of its own beside A and V,
    computed by hand from its weights; the paper's "advantage" returns A itself."""
    torch.manual_seed(0)
    net = build((4,), 3, torso="mlp", lstm_units=LSTM_UNITS, families=families,
                policy_head="separate")
    inputs = random_inputs(net, 4, 2)
    outputs, _ = net(*inputs)
    for f, family in enumerate(net.family_nets):
        obs, prev_action, prev_reward, reset, state = inputs
        x = family.torso(obs.reshape(8, 4).float())
        action_reward = torch.cat(
            (torch.nn.functional.one_hot(prev_action.clamp(min=0), 3).float()
             * (~reset).unsqueeze(-1), (prev_reward * ~reset).unsqueeze(-1)), dim=-1)
        h, _ = family.core(torch.cat((x.view(4, 2, -1), action_reward), -1), reset, state[:, f])
        head = family.policy_head
        assert_close(outputs.logits[f], h @ head.weight.T + head.bias,
                     terms=summed_terms(net, num_steps=4))
    assert not torch.equal(outputs.logits, outputs.adv)
    paper = build((4,), 3, torso="mlp", lstm_units=LSTM_UNITS, families=families)
    outputs, _ = paper(*inputs)
    assert outputs.logits is outputs.adv
    assert not any("policy_head" in name for name in paper.state_dict())


@pytest.mark.parametrize("head_hidden", [0, 5])
def test_policy_init_scale_multiplies_the_policy_heads_initial_output_layer(head_hidden):
    """policy_init_scale=0.01: from the same seed, every parameter as at scale 1 but the policy
    head's output layer, whose weight and bias are 0.01 times those; its logits start near
    zero, so π_λ = softmax(L/τ) is near uniform even at 1/τ = 50 (the ale-cpu box's top)."""
    def net(scale):
        torch.manual_seed(3)
        return build((4,), 6, torso="mlp", lstm_units=LSTM_UNITS, head_hidden=head_hidden,
                     policy_head="separate", policy_init_scale=scale)

    plain, small = net(1.0).state_dict(), net(0.01).state_dict()
    output = "family_nets.0.policy_head" + (".2" if head_hidden else "")
    for name, value in plain.items():
        if name.startswith(output):
            assert_close(small[name], 0.01 * value)
        else:  # the same draws in the same order: exactly equal
            assert torch.equal(small[name], value), name
    def greediest(scale):  # the largest probability of any action at 1/τ = 50
        with torch.no_grad():
            model = net(scale)
            outputs, _ = model(*random_inputs(model, 4, 2))
            return torch.softmax(50.0 * outputs.logits, dim=-1).max().item()

    assert greediest(1.0) > 0.9 and greediest(0.01) < 0.5  # 1/6 is uniform


# Errors


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"torso": "nature_cnn"}, "unknown torso 'nature_cnn'.*allowed: impala_deep, nature, minatar, mlp"),
        ({"families": 1.5}, "families must be an integer >= 1.*got 1.5"),
        ({"families": 0}, "families.*got 0"),
        ({"obs_shape": (4, 10)}, "rank 3.*obs_shape"),
        ({"obs_shape": ()}, "obs_shape"),
        ({"obs_shape": (4, 0, 10)}, "obs_shape"),
        ({"num_actions": 0}, "num_actions"),
        ({"lstm_units": 0}, "lstm_units"),
        ({"head_hidden": -1}, "head_hidden must be an int >= 0.*got -1"),
        ({"head_hidden": 2.5}, "head_hidden must be an int >= 0.*got 2.5"),
        ({"torso_kwargs": {"width": 2}}, "unknown torso_kwargs.*channels"),
        ({"torso_kwargs": [("layout", "HWC")]}, "torso_kwargs must be a dict"),
        ({"policy_head": "logits"}, "policy_head must be one of advantage, separate, got 'logits'"),
        ({"policy_init_scale": 0}, "policy_init_scale must be a positive number, got 0"),
        ({"policy_init_scale": True}, "policy_init_scale must be a positive number, got True"),
    ],
)
def test_build_rejects_bad_arguments(kwargs, match):
    args = {"obs_shape": (4, 10, 10), "num_actions": 3, "torso": "minatar"}
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        build(args.pop("obs_shape"), args.pop("num_actions"), **args)


@pytest.mark.parametrize(
    ("position", "name", "bad"),
    [
        (0, "obs", torch.zeros(3, 2, 6)),  # wrong observation shape
        (0, "obs", torch.zeros(2, 5)),  # missing the time axis
        (1, "prev_action", torch.zeros(3, 2, dtype=torch.long)),  # wrong [T, B]
        (1, "prev_action", torch.zeros(3, 2)),  # float actions
        (2, "prev_reward", torch.zeros(3)),  # wrong rank
        (2, "prev_reward", torch.zeros(2, 2, dtype=torch.long)),  # integer rewards
        (3, "reset", torch.zeros(2, 2)),  # not bool
        (3, "reset", torch.zeros(2, 2, 1, dtype=torch.bool)),  # wrong rank
        (4, "state", torch.zeros(2, 2, LSTM_UNITS)),  # missing the family axis
        (4, "state", torch.zeros(2, 2, 2, LSTM_UNITS)),  # 2 families for a 1-family net
    ],
)
def test_forward_rejects_bad_arguments(position, name, bad):
    net = tiny_net("mlp")
    inputs = list(random_inputs(net, 2, 2))
    inputs[position] = bad
    with pytest.raises(ValueError, match=name):
        net(*inputs)


def test_dynamics_predictions_reject_bad_alignment():
    net = tiny_net("mlp")
    inputs, actions, valid = aux_batch(net, num_steps=4)
    outputs, _ = net(*inputs)
    with pytest.raises(ValueError, match="actions"):
        net.dynamics_predictions(outputs, inputs[1], valid)  # T rows instead of T − 1
    with pytest.raises(ValueError, match="valid"):
        net.dynamics_predictions(outputs, actions, valid.bool())
    with pytest.raises(ValueError, match="T >= 2"):
        net.dynamics_predictions(outputs._replace(embedding=outputs.embedding[:, :1]),
                                 actions[:0], valid[:0])
