// SPDX-License-Identifier: Apache-2.0
// The libnl 3 headers netpath uses, plus small inline wrappers for what Swift 6 cannot import:
// variadic or macro-only APIs, and headers Glibc's module map leaves out.
#ifndef NETPATH_CNETLINK_SHIM_H
#define NETPATH_CNETLINK_SHIM_H

#include <netlink/netlink.h>
#include <netlink/msg.h>
#include <netlink/attr.h>
#include <netlink/addr.h>
#include <netlink/errno.h>
#include <netlink/object.h>
#include <netlink/socket.h>
#include <netlink/route/rtnl.h>
#include <netlink/route/link.h>
#include <netlink/route/addr.h>
#include <netlink/route/route.h>
#include <netlink/route/nexthop.h>

#include <linux/rtnetlink.h>
#include <linux/fib_rules.h>
#include <linux/filter.h>
#include <linux/if.h>
#include <linux/if_addr.h>
#include <linux/if_arp.h>
#include <linux/if_link.h>
#include <linux/netlink.h>

#include <errno.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

/// `SO_RCVBUFFORCE` lets root lift the receive buffer above `net.core.rmem_max`.
static inline int np_so_rcvbufforce(void) { return SO_RCVBUFFORCE; }

/// The netlink header of a message (macro-free access for Swift).
static inline unsigned short np_msg_type(struct nl_msg *msg) { return nlmsg_hdr(msg)->nlmsg_type; }

/// The `ifi_family` byte as it came off the wire: libnl rewrites the object's family for some
/// link messages, and bridge-port notifications (AF_BRIDGE) must not be mistaken for links.
static inline int np_link_wire_family(struct nlmsghdr *nlh) {
    if (nlh->nlmsg_len < NLMSG_LENGTH(sizeof(struct ifinfomsg))) return -1;
    return ((struct ifinfomsg *)NLMSG_DATA(nlh))->ifi_family;
}

/// What netpath reads from a link message (RTM_NEWLINK / RTM_DELLINK).
struct np_link {
    int index;
    unsigned int flags;
    unsigned short arptype;
    unsigned char operstate;
    unsigned int mtu;
    char name[IFNAMSIZ];
    char kind[32];
    unsigned char address[32];
    int address_length;
};

/// Parses a link message with libnl's attribute API (`nlmsg_parse`, `nla_parse_nested`).
///
/// Why not `nl_msg_parse`: for a link it looks up the cache operations by message type, builds a
/// full `rtnl_link` (statistics, every address family's and the link kind's own parsers, locks
/// around the kind registry) that netpath reads eight fields of and frees. That was most of the
/// engine's time between the kernel's message and the snapshot on a carrier change. The policy
/// makes libnl check each attribute's length before it is read.
/// Returns 0, or a negative libnl error for a malformed message.
static inline int np_parse_link(struct nlmsghdr *nlh, struct np_link *out) {
    static struct nla_policy policy[IFLA_MAX + 1] = {
        [IFLA_IFNAME] = {.type = NLA_STRING, .maxlen = IFNAMSIZ},
        [IFLA_MTU] = {.type = NLA_U32},
        [IFLA_OPERSTATE] = {.type = NLA_U8},
        [IFLA_LINKINFO] = {.type = NLA_NESTED},
    };
    static struct nla_policy info_policy[IFLA_INFO_MAX + 1] = {
        [IFLA_INFO_KIND] = {.type = NLA_STRING},
    };
    struct nlattr *tb[IFLA_MAX + 1];
    int err = nlmsg_parse(nlh, sizeof(struct ifinfomsg), tb, IFLA_MAX, policy);
    if (err < 0) return err;
    const struct ifinfomsg *ifi = nlmsg_data(nlh);
    memset(out, 0, sizeof *out);
    out->index = ifi->ifi_index;
    out->flags = ifi->ifi_flags;
    out->arptype = ifi->ifi_type;
    if (tb[IFLA_IFNAME]) nla_strlcpy(out->name, tb[IFLA_IFNAME], sizeof out->name);
    if (tb[IFLA_MTU]) out->mtu = nla_get_u32(tb[IFLA_MTU]);
    if (tb[IFLA_OPERSTATE]) out->operstate = nla_get_u8(tb[IFLA_OPERSTATE]);
    if (tb[IFLA_ADDRESS]) {
        int length = nla_len(tb[IFLA_ADDRESS]);
        if (length > (int)sizeof out->address) length = (int)sizeof out->address;
        if (length > 0) memcpy(out->address, nla_data(tb[IFLA_ADDRESS]), (size_t)length);
        out->address_length = length > 0 ? length : 0;
    }
    if (tb[IFLA_LINKINFO]) {
        struct nlattr *info[IFLA_INFO_MAX + 1];
        if (nla_parse_nested(info, IFLA_INFO_MAX, tb[IFLA_LINKINFO], info_policy) == 0 && info[IFLA_INFO_KIND])
            nla_strlcpy(out->kind, info[IFLA_INFO_KIND], sizeof out->kind);
    }
    return 0;
}

/// What netpath reads from a routing rule message (RTM_NEWRULE / RTM_DELRULE): `ip rule`.
struct np_rule {
    unsigned char family;
    unsigned char dst_len;
    unsigned char src_len;
    unsigned char tos;
    unsigned char action;       // FR_ACT_*
    unsigned int flags;         // FIB_RULE_INVERT, …
    unsigned int priority;
    unsigned int table;         // FRA_TABLE when present, else the header's byte
    unsigned int goto_target;   // FRA_GOTO
    int has_fwmark;
    unsigned int fwmark;
    unsigned int fwmask;        // 0xffffffff when absent and a mark is set, as the kernel does
    int suppress_prefixlen;     // -1 when absent
    int suppress_ifgroup;       // -1 when absent
    int l3mdev;
    int has_uid_range;
    unsigned int uid_start, uid_end;
    unsigned char ip_proto;
    int has_port_range;
    unsigned char src[16];
    unsigned char dst[16];
    char iifname[IFNAMSIZ];
    char oifname[IFNAMSIZ];
};

/// Parses a rule message with libnl's attribute API. Returns 0, or a negative libnl error.
static inline int np_parse_rule(struct nlmsghdr *nlh, struct np_rule *out) {
    static struct nla_policy policy[FRA_MAX + 1] = {
        [FRA_PRIORITY] = {.type = NLA_U32},
        [FRA_TABLE] = {.type = NLA_U32},
        [FRA_GOTO] = {.type = NLA_U32},
        [FRA_FWMARK] = {.type = NLA_U32},
        [FRA_FWMASK] = {.type = NLA_U32},
        [FRA_SUPPRESS_PREFIXLEN] = {.type = NLA_U32},
        [FRA_SUPPRESS_IFGROUP] = {.type = NLA_U32},
        [FRA_L3MDEV] = {.type = NLA_U8},
        [FRA_IP_PROTO] = {.type = NLA_U8},
        [FRA_IIFNAME] = {.type = NLA_STRING, .maxlen = IFNAMSIZ},
        [FRA_OIFNAME] = {.type = NLA_STRING, .maxlen = IFNAMSIZ},
    };
    struct nlattr *tb[FRA_MAX + 1];
    int err = nlmsg_parse(nlh, sizeof(struct fib_rule_hdr), tb, FRA_MAX, policy);
    if (err < 0) return err;
    const struct fib_rule_hdr *frh = nlmsg_data(nlh);
    memset(out, 0, sizeof *out);
    out->family = frh->family;
    out->dst_len = frh->dst_len;
    out->src_len = frh->src_len;
    out->tos = frh->tos;
    out->action = frh->action;
    out->flags = frh->flags;
    out->table = tb[FRA_TABLE] ? nla_get_u32(tb[FRA_TABLE]) : frh->table;
    if (tb[FRA_PRIORITY]) out->priority = nla_get_u32(tb[FRA_PRIORITY]);
    if (tb[FRA_GOTO]) out->goto_target = nla_get_u32(tb[FRA_GOTO]);
    if (tb[FRA_FWMARK] || tb[FRA_FWMASK]) {
        out->has_fwmark = 1;
        out->fwmark = tb[FRA_FWMARK] ? nla_get_u32(tb[FRA_FWMARK]) : 0;
        out->fwmask = tb[FRA_FWMASK] ? nla_get_u32(tb[FRA_FWMASK]) : 0xffffffffu;
    }
    out->suppress_prefixlen = tb[FRA_SUPPRESS_PREFIXLEN] ? (int)nla_get_u32(tb[FRA_SUPPRESS_PREFIXLEN]) : -1;
    out->suppress_ifgroup = tb[FRA_SUPPRESS_IFGROUP] ? (int)nla_get_u32(tb[FRA_SUPPRESS_IFGROUP]) : -1;
    if (tb[FRA_L3MDEV]) out->l3mdev = nla_get_u8(tb[FRA_L3MDEV]);
    if (tb[FRA_IP_PROTO]) out->ip_proto = nla_get_u8(tb[FRA_IP_PROTO]);
    if (tb[FRA_UID_RANGE] && nla_len(tb[FRA_UID_RANGE]) >= (int)sizeof(struct fib_rule_uid_range)) {
        const struct fib_rule_uid_range *range = nla_data(tb[FRA_UID_RANGE]);
        out->has_uid_range = 1;
        out->uid_start = range->start;
        out->uid_end = range->end;
    }
    out->has_port_range = tb[FRA_SPORT_RANGE] || tb[FRA_DPORT_RANGE];
    if (tb[FRA_SRC] && nla_len(tb[FRA_SRC]) <= 16) memcpy(out->src, nla_data(tb[FRA_SRC]), (size_t)nla_len(tb[FRA_SRC]));
    if (tb[FRA_DST] && nla_len(tb[FRA_DST]) <= 16) memcpy(out->dst, nla_data(tb[FRA_DST]), (size_t)nla_len(tb[FRA_DST]));
    if (tb[FRA_IIFNAME]) nla_strlcpy(out->iifname, tb[FRA_IIFNAME], sizeof out->iifname);
    if (tb[FRA_OIFNAME]) nla_strlcpy(out->oifname, tb[FRA_OIFNAME], sizeof out->oifname);
    return 0;
}

/// Sends `ip route get ADDRESS [oif INDEX] fibmatch` (RTM_GETROUTE with RTM_F_FIB_MATCH: the
/// reply is the route the lookup matched, with its table, metric and next hops, `ip rule` applied
/// as for any packet this host sends). The reply arrives as one RTM_NEWROUTE message, or an error.
/// `length` is 4 or 16. `oif` 0 asks without an output interface.
///
/// With `oif` (RTA_OIF) the kernel answers the best route *through that interface* (verified on
/// 6.18, both families): routes through other interfaces are skipped and the lookup falls back
/// to shorter prefixes and later rules, so a `to X lookup 100` rule whose table routes through
/// another link answers with the main table's route through this one. Where nothing routes
/// through it the answer is an error (EHOSTUNREACH for IPv4, ENETUNREACH for IPv6); without
/// RTM_F_FIB_MATCH IPv4 would instead invent an on-link route through it ("assume the
/// destination is on link").
/// Returns what `send` returns: the bytes sent, or -1 with errno set.
static inline int np_route_get_request(int fd, unsigned int seq, int family, const unsigned char *address, int length, int oif) {
    struct {
        struct nlmsghdr nlh;
        struct rtmsg rtm;
        char attributes[2 * RTA_SPACE(16)];
    } request;
    if (length != 4 && length != 16) {  // an IPv4 or IPv6 address, nothing longer fits
        errno = EINVAL;
        return -1;
    }
    memset(&request, 0, sizeof request);
    request.nlh.nlmsg_type = RTM_GETROUTE;
    request.nlh.nlmsg_flags = NLM_F_REQUEST;
    request.nlh.nlmsg_seq = seq;
    request.rtm.rtm_family = (unsigned char)family;
    request.rtm.rtm_dst_len = (unsigned char)(length * 8);
    // Without RTM_F_LOOKUP_TABLE the kernel reports every answer as table main.
    request.rtm.rtm_flags = RTM_F_FIB_MATCH | RTM_F_LOOKUP_TABLE;
    unsigned int used = NLMSG_LENGTH(sizeof(struct rtmsg));
    struct rtattr *rta = (struct rtattr *)((char *)&request + NLMSG_ALIGN(used));
    rta->rta_type = RTA_DST;
    rta->rta_len = RTA_LENGTH(length);
    memcpy(RTA_DATA(rta), address, (size_t)length);
    used = NLMSG_ALIGN(used) + RTA_ALIGN(rta->rta_len);
    if (oif > 0) {
        rta = (struct rtattr *)((char *)&request + used);
        rta->rta_type = RTA_OIF;
        rta->rta_len = RTA_LENGTH(sizeof(int));
        memcpy(RTA_DATA(rta), &oif, sizeof(int));
        used += RTA_ALIGN(rta->rta_len);
    }
    request.nlh.nlmsg_len = used;
    return (int)send(fd, &request, used, 0);
}

/// Sends a dump request (`RTM_GETLINK`, `RTM_GETADDR`, `RTM_GETROUTE`, `RTM_GETRULE`) for both
/// families. Returns what `send` returns.
static inline int np_dump_request(int fd, unsigned int seq, int type) {
    struct {
        struct nlmsghdr nlh;
        struct rtgenmsg gen;
        char pad[3];
    } request;
    memset(&request, 0, sizeof request);
    request.nlh.nlmsg_len = NLMSG_LENGTH(sizeof(struct rtgenmsg));
    request.nlh.nlmsg_type = (unsigned short)type;
    request.nlh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
    request.nlh.nlmsg_seq = seq;
    request.gen.rtgen_family = AF_UNSPEC;
    return (int)send(fd, &request, request.nlh.nlmsg_len, 0);
}

/// Whether a route message is a default route (`rtm_dst_len` 0) of IPv4 or IPv6, in any table
/// and of any type: netpath keeps those. Everything the path model reads is a default route (the
/// kernel's own choice and a target's routes are asked of the kernel, never read from a mirror),
/// and a non-unicast default must be kept too: `ip route replace` can turn a unicast default into
/// an `unreachable` one in the same slot, and the mirror must then drop the old one.
/// Reading three bytes of the header here is what lets a 1,000,000-route table cost nothing:
/// the other routes are never parsed, copied or allocated.
static inline int np_route_is_default(const struct nlmsghdr *nlh) {
    if (nlh->nlmsg_len < NLMSG_LENGTH(sizeof(struct rtmsg))) return 0;
    const struct rtmsg *rtm = (const struct rtmsg *)NLMSG_DATA(nlh);
    return rtm->rtm_dst_len == 0 && (rtm->rtm_family == AF_INET || rtm->rtm_family == AF_INET6);
}

/// An address whose route matters although routes to it are not kept: the internet probe of
/// each family, a policy's target, a library host.
struct np_watch {
    unsigned char family;
    unsigned char bytes[16];
};

/// Whether the route in `nlh` (whose destination prefix `np_walk` does not keep) covers one of
/// the `count` watched addresses: such a route can change the kernel's answer for it, so the
/// engine asks again. Reads the header and `RTA_DST` in place; allocates nothing.
static inline int np_route_covers(const struct nlmsghdr *nlh, const struct np_watch *watched, int count) {
    if (count <= 0 || nlh->nlmsg_len < NLMSG_LENGTH(sizeof(struct rtmsg))) return 0;
    const struct rtmsg *rtm = (const struct rtmsg *)NLMSG_DATA(nlh);
    int width = rtm->rtm_family == AF_INET ? 4 : rtm->rtm_family == AF_INET6 ? 16 : 0;
    if (width == 0 || rtm->rtm_dst_len > width * 8) return 0;
    const unsigned char *dst = NULL;
    int left = (int)nlh->nlmsg_len - (int)NLMSG_LENGTH(sizeof(struct rtmsg));
    const struct rtattr *rta = (const struct rtattr *)((const char *)rtm + NLMSG_ALIGN(sizeof(struct rtmsg)));
    for (; RTA_OK(rta, left); rta = RTA_NEXT(rta, left)) {
        if (rta->rta_type == RTA_DST && (int)RTA_PAYLOAD(rta) >= width) {
            dst = (const unsigned char *)RTA_DATA(rta);
            break;
        }
    }
    if (!dst) return rtm->rtm_dst_len == 0;
    for (int i = 0; i < count; i++) {
        if (watched[i].family != rtm->rtm_family) continue;
        int bits = rtm->rtm_dst_len, byte = 0, same = 1;
        for (; bits >= 8; bits -= 8, byte++) {
            if (dst[byte] != watched[i].bytes[byte]) { same = 0; break; }
        }
        if (same && bits > 0) {
            unsigned char mask = (unsigned char)(0xff << (8 - bits));
            same = (dst[byte] & mask) == (watched[i].bytes[byte] & mask);
        }
        if (same) return 1;
    }
    return 0;
}

/// What `np_walk` found in one datagram.
struct np_walk_result {
    /// Messages handed to the callback.
    unsigned long delivered;
    /// Route messages dropped: neither default routes nor covering a kept address.
    unsigned long skipped;
    /// 1 when a dropped route covers a watched address (`np_route_covers`).
    int covering;
    /// 1 when `NLMSG_DONE` ended a dump.
    int done;
    /// The negative errno of an `NLMSG_ERROR` that is not an acknowledgement, else 0.
    int error;
    /// 1 when a message carried `NLM_F_DUMP_INTR`: the dump changed under the kernel's feet.
    int interrupted;
    /// 1 when the datagram ended in the middle of a message.
    int truncated;
};

/// The callback `np_walk` calls for each message it delivers.
typedef void (*np_message_fn)(struct nlmsghdr *nlh, void *arg);

/// Walks the messages of one datagram that `recv` put in `buffer`, in order: control messages
/// (done, error, noop) are reported in `out`, every other message goes to `fn`. When
/// `filter_routes` is set, a route message goes to `fn` only when it is a default route
/// (`np_route_is_default`) or covers one of the `kept_count` `kept` addresses (the internet
/// probes: the few routes that can change the kernel's route to the internet, so that the engine
/// knows when to ask it again); any other is only counted, and checked against the
/// `watch_count` `watched` addresses (`np_route_covers`: a target's routes changed).
/// With `seq` non-zero, messages of another sequence number (a late reply to an earlier request)
/// are passed over.
/// libnl's own receive path is not used for this: it copies every message into a freshly
/// allocated `nl_msg` before any callback can look at it.
static inline void np_walk(void *buffer, int length, unsigned int seq, int filter_routes,
                           const struct np_watch *kept, int kept_count,
                           const struct np_watch *watched, int watch_count,
                           np_message_fn fn, void *arg, struct np_walk_result *out) {
    struct nlmsghdr *nlh = (struct nlmsghdr *)buffer;
    int left = length;
    for (; NLMSG_OK(nlh, left); nlh = NLMSG_NEXT(nlh, left)) {
        if (seq != 0 && nlh->nlmsg_seq != seq) continue;
        if (nlh->nlmsg_flags & NLM_F_DUMP_INTR) out->interrupted = 1;
        switch (nlh->nlmsg_type) {
        case NLMSG_NOOP:
            continue;
        case NLMSG_DONE:
            out->done = 1;
            continue;
        case NLMSG_ERROR:
            if (nlh->nlmsg_len >= NLMSG_LENGTH(sizeof(struct nlmsgerr))) {
                int code = ((struct nlmsgerr *)NLMSG_DATA(nlh))->error;
                if (code != 0) out->error = code;
            } else {
                out->error = -EBADMSG;
            }
            continue;
        case RTM_NEWROUTE:
        case RTM_DELROUTE:
            if (filter_routes && !np_route_is_default(nlh) && !np_route_covers(nlh, kept, kept_count)) {
                out->skipped++;
                if (!out->covering && np_route_covers(nlh, watched, watch_count)) out->covering = 1;
                continue;
            }
            break;
        default:
            break;
        }
        out->delivered++;
        fn(nlh, arg);
    }
    if (left > 0) out->truncated = 1;
}

/// `struct mmsghdr` (declared by <sys/socket.h> only under _GNU_SOURCE, like `recvmmsg` itself:
/// see `setns` above for why that is not defined here).
struct np_mmsghdr {
    struct msghdr msg_hdr;
    unsigned int msg_len;
};

/// The most datagrams `np_receive_batch` reads in one call.
#define NP_BATCH_SLOTS 16

/// Reads up to `slots` (at most NP_BATCH_SLOTS) queued datagrams at once (`recvmmsg`,
/// non-blocking) into `slots` consecutive slots of `slot_size` bytes of `buffer`, and walks each
/// as `np_walk` does, accumulating into `out`.
///
/// Why: each route notification is a datagram of its own, so a storm read with `recv` costs a
/// system call per route, and a wake-up that finds one message costs a second `recv` to learn
/// that the socket is empty. Fewer datagrams than slots means the queue was empty: the caller
/// stops without asking again.
/// Returns the number of datagrams read (0 when none was queued), or -errno (`-ENOBUFS`: an
/// overrun). A datagram larger than its slot sets `out->truncated`.
static inline int np_receive_batch(int fd, void *buffer, int slot_size, int slots, int filter_routes,
                                   const struct np_watch *kept, int kept_count,
                                   const struct np_watch *watched, int watch_count,
                                   np_message_fn fn, void *arg, struct np_walk_result *out) {
    struct np_mmsghdr headers[NP_BATCH_SLOTS];
    struct iovec vectors[NP_BATCH_SLOTS];
    if (slots > NP_BATCH_SLOTS) slots = NP_BATCH_SLOTS;
    memset(headers, 0, sizeof headers);
    for (int i = 0; i < slots; i++) {
        vectors[i].iov_base = (char *)buffer + (size_t)i * (size_t)slot_size;
        vectors[i].iov_len = (size_t)slot_size;
        headers[i].msg_hdr.msg_iov = &vectors[i];
        headers[i].msg_hdr.msg_iovlen = 1;
    }
    long count;
    do {
        count = syscall(SYS_recvmmsg, fd, headers, (unsigned int)slots, MSG_DONTWAIT, NULL);
    } while (count < 0 && errno == EINTR);
    if (count < 0) return (errno == EAGAIN || errno == EWOULDBLOCK) ? 0 : -errno;
    for (long i = 0; i < count; i++) {
        if (headers[i].msg_hdr.msg_flags & MSG_TRUNC) out->truncated = 1;
        np_walk(vectors[i].iov_base, (int)headers[i].msg_len, 0, filter_routes, kept, kept_count, watched,
                watch_count, fn, arg, out);
    }
    return (int)count;
}

/// A libnl message holding a copy of `nlh`, for `nl_msg_parse` (addresses and kept routes only).
/// Free it with `nlmsg_free`. NULL when out of memory.
static inline struct nl_msg *np_msg_copy(struct nlmsghdr *nlh) {
    struct nl_msg *msg = nlmsg_convert(nlh);
    // libnl finds the parser by protocol and type: a converted message has no protocol yet.
    if (msg) nlmsg_set_proto(msg, NETLINK_ROUTE);
    return msg;
}


/// The `RTNLGRP_*` groups netpath joins: links, addresses, routes and rules of both families.
static inline int np_group_link(void) { return RTNLGRP_LINK; }
static inline int np_group_ipv4_ifaddr(void) { return RTNLGRP_IPV4_IFADDR; }
static inline int np_group_ipv4_route(void) { return RTNLGRP_IPV4_ROUTE; }
static inline int np_group_ipv4_rule(void) { return RTNLGRP_IPV4_RULE; }
static inline int np_group_ipv6_ifaddr(void) { return RTNLGRP_IPV6_IFADDR; }
static inline int np_group_ipv6_route(void) { return RTNLGRP_IPV6_ROUTE; }
static inline int np_group_ipv6_rule(void) { return RTNLGRP_IPV6_RULE; }

#endif
