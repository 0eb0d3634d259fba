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
#include <linux/if.h>
#include <linux/if_addr.h>
#include <linux/if_arp.h>
#include <linux/if_link.h>
#include <linux/netlink.h>

#include <errno.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

/// `SO_RCVBUFFORCE` lets root lift the receive buffer above `net.core.rmem_max`.
static inline int np_so_rcvbufforce(void) { return SO_RCVBUFFORCE; }

/// The netlink header of a message (macro-free access for Swift).
static inline unsigned short np_msg_type(struct nl_msg *msg) { return nlmsg_hdr(msg)->nlmsg_type; }
static inline unsigned short np_msg_flags(struct nl_msg *msg) { return nlmsg_hdr(msg)->nlmsg_flags; }

/// The `ifi_family` byte as it came off the wire: libnl rewrites the object's family for some
/// link messages, and bridge-port notifications (AF_BRIDGE) must not be mistaken for links.
static inline int np_link_wire_family(struct nl_msg *msg) {
    struct nlmsghdr *nlh = nlmsg_hdr(msg);
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
static inline int np_parse_link(struct nl_msg *msg, struct np_link *out) {
    static struct nla_policy policy[IFLA_MAX + 1] = {
        [IFLA_IFNAME] = {.type = NLA_STRING, .maxlen = IFNAMSIZ},
        [IFLA_MTU] = {.type = NLA_U32},
        [IFLA_OPERSTATE] = {.type = NLA_U8},
        [IFLA_LINKINFO] = {.type = NLA_NESTED},
    };
    static struct nla_policy info_policy[IFLA_INFO_MAX + 1] = {
        [IFLA_INFO_KIND] = {.type = NLA_STRING},
    };
    struct nlmsghdr *nlh = nlmsg_hdr(msg);
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
static inline int np_parse_rule(struct nl_msg *msg, struct np_rule *out) {
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
    struct nlmsghdr *nlh = nlmsg_hdr(msg);
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

/// Sends `ip route get ADDRESS` (RTM_GETROUTE with RTM_F_FIB_MATCH: the reply is the route the
/// lookup matched, with its table, metric and next hops, `ip rule` applied as for any packet this
/// host sends). The reply arrives as one RTM_NEWROUTE message, or an error (ENETUNREACH).
/// `length` is 4 or 16. Returns what `nl_send_auto` returns.
static inline int np_route_get_request(struct nl_sock *sk, int family, const unsigned char *address, int length) {
    struct rtmsg rtm;
    memset(&rtm, 0, sizeof rtm);
    rtm.rtm_family = (unsigned char)family;
    rtm.rtm_dst_len = (unsigned char)(length * 8);
    // Without RTM_F_LOOKUP_TABLE the kernel reports every answer as table main.
    rtm.rtm_flags = RTM_F_FIB_MATCH | RTM_F_LOOKUP_TABLE;
    struct nl_msg *msg = nlmsg_alloc_simple(RTM_GETROUTE, NLM_F_REQUEST);
    if (!msg) return -NLE_NOMEM;
    int err = nlmsg_append(msg, &rtm, sizeof rtm, NLMSG_ALIGNTO);
    if (err >= 0) err = nla_put(msg, RTA_DST, length, address);
    if (err >= 0) err = nl_send_auto(sk, msg);
    nlmsg_free(msg);
    return err;
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
